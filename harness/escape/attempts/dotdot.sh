# attack: reach outside through .. components of a workspace path
echo escaped > "$WS/../out/dotdot-new"
echo escaped >> "$WS/sub/../../out/target"
