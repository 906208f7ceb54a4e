# attack: overwrite an existing file outside the workspace (O_TRUNC open)
echo escaped > "$TARGET"
