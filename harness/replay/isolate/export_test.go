package isolate

// EnvelopeBound is envelopeBound, for the tests.
var EnvelopeBound = envelopeBound
