package example

// Chain lists the backends tried in order.
func Chain() []string {
	// --8<-- [start:chain]
	return []string{
		"bwrap",
		// --8<-- [start:inner]
		"landlock",
		// --8<-- [end:inner]
	}
	// --8<-- [end:chain]
}

// --8<-- [start:unclosed]
func f() {}
