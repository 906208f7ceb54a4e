export const needle = 1
const hay = 2
export const needle2 = needle
