#!/bin/sh
# The command-line tools a guest script commonly runs (through subprocess),
# each used the way scripts use it. The tests run this under the filter
# with strace: no call may be refused on the way, since a tool that falls
# back quietly (or fails) on EPERM hides a gap in the allowlist. Runs in
# $TMPDIR; every tool here is in Debian's base image or in make deps.
set -eu
cd "$TMPDIR"
mkdir -p src/sub/deep
printf 'pear\napple\nfig\napple\n' > src/sub/list.txt
printf 'data\n' > src/sub/deep/file.bin
chmod 0640 src/sub/deep/file.bin
ln -s ../list.txt src/sub/deep/link
mkfifo fifo && rm fifo

# Archives and compression.
tar -cf a.tar src && tar -tvf a.tar >/dev/null && mkdir x && tar -xf a.tar -C x
tar -czf a.tgz src && mkdir y && tar -xzpf a.tgz -C y
tar -cJf a.txz src && tar -xJf a.txz -C y --overwrite
tar -cjf a.tbz src && tar -xjf a.tbz -C y --overwrite
gzip -k src/sub/list.txt && gunzip -c src/sub/list.txt.gz >/dev/null && gzip -df src/sub/list.txt.gz
xz -k src/sub/list.txt && xz -dc src/sub/list.txt.xz >/dev/null && rm src/sub/list.txt.xz
bzip2 -k src/sub/list.txt && bunzip2 -c src/sub/list.txt.bz2 >/dev/null && rm src/sub/list.txt.bz2
zip -qr a.zip src && unzip -q a.zip -d z

# Files.
cp src/sub/list.txt copy.txt
cp -r src src2
cp -a src src3
cp -p --reflink=auto src/sub/list.txt copy2.txt
mv copy2.txt moved.txt
ln moved.txt hard.txt
ln -sf moved.txt soft.txt
touch -d '2020-01-01 00:00' moved.txt && touch moved.txt
chmod -R go-w src3
install -m 0755 moved.txt installed.txt
find . -name '*.txt' -newer a.tar -type f >/dev/null
find src -type l -exec readlink {} \; >/dev/null
du -s . >/dev/null && df . >/dev/null && stat moved.txt >/dev/null
rm -rf src2 src3 x y z
dd if=/dev/zero of=zeros bs=4096 count=16 status=none && truncate -s 1M zeros && split -b 100k zeros part.
cat part.* | cmp - zeros && rm part.* zeros

# Text.
sort src/sub/list.txt >/dev/null
sort -u -o sorted.txt src/sub/list.txt
seq 1 200000 | sort -rn -S 1M -T "$TMPDIR" | head -1 >/dev/null
sha256sum src/sub/list.txt >/dev/null && md5sum src/sub/list.txt >/dev/null
wc -l src/sub/list.txt >/dev/null && uniq -c sorted.txt >/dev/null && cut -c1-2 sorted.txt >/dev/null
grep -r apple src >/dev/null && sed -i 's/fig/date/' sorted.txt && awk '{print $1}' sorted.txt >/dev/null
base64 sorted.txt | base64 -d >/dev/null
printf '%s\n' a b c | xargs -n1 echo >/dev/null
date >/dev/null && env >/dev/null && id >/dev/null && uname -a >/dev/null && nproc >/dev/null

# sqlite3 and git.
sqlite3 db.sqlite 'create table t(x); insert into t values (1), (2); select sum(x) from t;' >/dev/null
git init -q repo
cd repo
git config user.email guest@example.invalid && git config user.name guest
cp ../sorted.txt . && git add sorted.txt && git commit -qm one
echo more >> sorted.txt && git commit -qam two && git log --oneline >/dev/null && git status --short >/dev/null
git diff HEAD~1 >/dev/null && git gc -q && git archive HEAD | tar -t >/dev/null
echo tools done
