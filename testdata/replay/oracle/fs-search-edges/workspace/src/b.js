no match here
