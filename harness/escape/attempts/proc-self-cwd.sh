# attack: chdir outside, then write through /proc/self/cwd
cd "$OUT" && echo escaped >> /proc/self/cwd/target
