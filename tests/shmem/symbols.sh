#!/bin/sh
# Every function that shmem.h declares is defined (exported) by libhgas_shmem, the header
# compiles as C99, C11 and C++, and a C11 generic call on a type outside the tables fails to compile.  usage: symbols.sh <c compiler> <c++ compiler> <include dir> <libhgas_shmem>
set -eu
cc=$1 cxx=$2 inc=$3 lib=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cc" -E -P -I"$inc" "$inc/shmem.h" |
  grep -oE '\b(shmem_[a-z0-9_]+|start_pes|_my_pe|_num_pes|shmalloc|shfree|shrealloc|shmemalign)[[:space:]]*\(' |
  sed 's/[[:space:]]*($//' | sort -u >"$tmp/declared"
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$tmp/defined"
missing=$(comm -23 "$tmp/declared" "$tmp/defined")
if [ -n "$missing" ]; then
  echo "declared in shmem.h but not defined by $lib:"
  echo "$missing"
  exit 1
fi
for std in c99 c11; do
  printf '#include <shmem.h>\nint main(void) { return 0; }\n' >"$tmp/t.c"
  "$cc" -std=$std -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o"
done
# A type outside the table must not compile, and the diagnostic must say why.
printf '#include <shmem.h>\nstruct s { int a; };\nvoid f(struct s *d, struct s *v) { shmem_put(d, v, 1, 0); }\n' >"$tmp/neg.c"
if "$cc" -std=c11 -I"$inc" -c "$tmp/neg.c" -o "$tmp/neg.o" 2>"$tmp/neg.err"; then
  echo "shmem_put on a struct compiled; it must not"
  exit 1
fi
grep -q hgasi_shmem_type_not_supported "$tmp/neg.err" || { echo "unexpected diagnostic:"; cat "$tmp/neg.err"; exit 1; }
printf '#include <shmem.h>\nint main() { return 0; }\n' >"$tmp/t.cpp"
"$cxx" -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.cpp" -o "$tmp/t.o"
echo "$(wc -l <"$tmp/declared") functions declared, all defined; header compiles as C99, C11, C++; bad generic type rejected"
