/*
 * mapped_file.c — read-only mmap of a whole file (see mapped_file.h).
 */
#include "formats/mapped_file.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

rf_status rf_map_file(const char *path, rf_mapped_file *out, rf_error *err)
{
    struct stat st;
    rf_status status = RF_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    out->data = NULL;
    out->size = 0;
    if (fd < 0)
        return rf_fail(err, RF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        status = rf_fail(err, RF_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        status = rf_fail(err, RF_ERR_IO, "%s: not a regular file", path);
        goto done;
    }
    if (st.st_size == 0)
        goto done;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        status = rf_fail(err, RF_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
        goto done;
    }
    out->data = p;
    out->size = (size_t)st.st_size;
done:
    close(fd);
    return status;
}

void rf_unmap_file(rf_mapped_file *m)
{
    if (m->data)
        munmap(m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

void rf_mapped_file_release(const rf_mapped_file *m, const void *start, size_t bytes)
{
    uintptr_t map = (uintptr_t)m->data, from = (uintptr_t)start;
    if (!m->data || from < map || from - map > m->size || bytes > m->size - (from - map))
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (from + page - 1) / page * page, end = (from + bytes) / page * page;
    /* a read-only private mapping never written: dropping its pages loses
       nothing, the next read faults them in from the file again */
    if (end > first)
        madvise((void *)first, end - first, MADV_DONTNEED);
}
