#!/bin/sh
# Runs PROG_B on PE 1 and PROG_A on every other PE: a job whose PEs run different executables.
#   usage (as the program of hgasrun): two_programs.sh PROG_A PROG_B [args...]
a=$1 b=$2
shift 2
if [ "${HGAS_RANK:-0}" = 1 ]; then exec "$b" "$@"; fi
exec "$a" "$@"
