/*
 * position_options.c — --extend-positions, --rope-scaling, --rope-factor
 * (see position_options.h).
 */
#include "position_options.h"

#include "cli.h"
#include "shared_options.h"

#include <stdlib.h>
#include <string.h>

const char cli_position_help[] =
    "  --extend-positions    accept inputs longer than the model's max_position, with\n"
    "                        rotary angles computed past it by the same formula; what\n"
    "                        the model makes of positions it was not trained on depends\n"
    "                        on the checkpoint, not on the engine (docs/long-inputs.md)\n"
    "  --rope-scaling none|linear|ntk  stretch the trained positions instead: linear\n"
    "                        divides positions by the factor, ntk multiplies the rotary\n"
    "                        base by factor^(d/(d-2)); up to max_position x factor tokens\n"
    "                        are then accepted (default: the model's own, else none)\n"
    "  --rope-factor F       the scaling factor, > 0 (default: the model's, else 1)\n";

int cli_position_option(cli_position_opts *o, const char *cmd, int argc, char **argv, int *i)
{
    const char *v;
    int r;
    if (!strcmp(argv[*i], "--extend-positions")) {
        o->extend = true;
        return 1;
    }
    if ((r = cli_take_value(cmd, argc, argv, i, "--rope-scaling", &v))) {
        if (r < 0)
            return r;
        if (!strcmp(v, "none"))
            o->scaling = RF_ROPE_SCALING_NONE;
        else if (!strcmp(v, "linear"))
            o->scaling = RF_ROPE_SCALING_LINEAR;
        else if (!strcmp(v, "ntk"))
            o->scaling = RF_ROPE_SCALING_NTK;
        else {
            cli_usage_error(cmd, "--rope-scaling wants none, linear or ntk, not '%s'", v);
            return -1;
        }
        return 1;
    }
    if ((r = cli_take_value(cmd, argc, argv, i, "--rope-factor", &v))) {
        if (r < 0)
            return r;
        char *end;
        double f = strtod(v, &end);
        if (end == v || *end || !(f > 0) || f > 1024) {
            cli_usage_error(cmd, "--rope-factor wants a number above 0 and at most 1024, not '%s'",
                            v);
            return -1;
        }
        o->factor = (float)f;
        return 1;
    }
    return 0;
}

void cli_position_apply(const cli_position_opts *o, rf_context_params *cp)
{
    cp->extend_positions = o->extend;
    cp->rope_scaling = o->scaling;
    cp->rope_factor = o->factor;
}
