#!/bin/sh
# The docs stand alone: the README's table names every document in docs/, and nothing in the
# repository points to a design or style file that is not in it.   docs_check.sh <source dir>
set -u
src=$1
FAILED=0
for f in "$src"/docs/*.md; do
    name=$(basename "$f")
    if grep -q "\`$name\`" "$src/README.md"; then echo "ok   README names docs/$name"
    else echo "FAIL README's table does not name docs/$name"; FAILED=$((FAILED + 1)); fi
done
# docs_point_outside: STYLE.md and DESIGN.md were referred to, but docs/style.md and
# docs/design.md are the repository's.
bad=$(cd "$src" && grep -rnE "STYLE\.md|DESIGN\.md" --include='*.md' --include='*.cpp' --include='*.hpp' \
      --include='*.h' --include='*.c' --include='*.cu' --include='*.cuh' --include='*.txt' --include='*.sh' \
      --include='*.py' --include='*.in' . | grep -v "^./build" | grep -v "tests/unit/docs_check.sh")
if [ -n "$bad" ]; then echo "FAIL references to files not in the repository:"; echo "$bad"; FAILED=$((FAILED + 1))
else echo "ok   no reference to STYLE.md or DESIGN.md"; fi
for f in docs/style.md docs/design.md; do
    [ -f "$src/$f" ] && echo "ok   $f exists" || { echo "FAIL $f is missing"; FAILED=$((FAILED + 1)); }
done
echo "$FAILED failed"
[ $FAILED = 0 ]
