//go:build !linux

package spawn

// reaper off Linux only starts: there is no child subreaper to make, so
// nothing keeps a call's detached processes from outliving it.
type reaper struct{}

var theReaper = &reaper{}

func (r *reaper) enable() error { return nil }

func (r *reaper) launch(start func() (int, error)) error {
	_, err := start()
	return err
}

func (r *reaper) keep(start func() (int, error)) (func(), error) {
	_, err := start()
	return func() {}, err
}

func (r *reaper) exited(pid int, capless bool) {}

func (r *reaper) collected(pid int) {}
