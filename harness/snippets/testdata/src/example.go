package example

// Chain lists the backends tried in order.
// --8<-- [start:chain]
var Chain = []string{
	"bwrap",
	// --8<-- [start:inner]
	"landlock",
	// --8<-- [end:inner]
}
// --8<-- [end:chain]

// --8<-- [start:unclosed]
func f() {}
