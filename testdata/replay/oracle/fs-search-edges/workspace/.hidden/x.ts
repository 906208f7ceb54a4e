needle hidden
