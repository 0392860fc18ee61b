# test_cli_commands.sh — `roformer COMMAND` runs exactly the command named:
# a command typed in part ('emb'), or with more after it ('embedx'), is an
# unknown command (exit 2, named on stderr with the usage), never another
# command; fill-mask is typed with '-'; no command is the usage, exit 2;
# --help the usage on stdout, exit 0. No model needed.
. tests/check.sh

run() { "$ROFORMER" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
unknown() { # unknown WORD: exit 2, the word named, the usage on stderr, nothing on stdout
    run "$1" --help
    check "'roformer $1': exit 2" [ "$rc" -eq 2 ]
    check "'roformer $1': named as an unknown command, with the usage" \
        sh -c "grep -qF \"unknown command '$1'\" '$TMP/err' &&
               grep -q '^usage: roformer' '$TMP/err' && [ ! -s '$TMP/out' ]"
}
unknown emb
unknown e
unknown embedx
unknown fill
unknown Embed

run fill-mask --help
check "'roformer fill-mask --help': exit 0, its usage" \
    sh -c "[ $rc -eq 0 ] && grep -q 'roformer fill-mask' '$TMP/out'"
run embed --help
check "'roformer embed --help': exit 0, embed's usage" \
    sh -c "[ $rc -eq 0 ] && grep -q 'roformer embed' '$TMP/out'"
run
check "'roformer' alone: exit 2, the usage on stderr" \
    sh -c "[ $rc -eq 2 ] && grep -q '^usage: roformer' '$TMP/err'"
run --help
check "'roformer --help': exit 0, the usage on stdout naming every command" \
    sh -c "[ $rc -eq 0 ] && grep -q '^  embed ' '$TMP/out' && grep -q '^  fill-mask ' '$TMP/out'"
check_done
