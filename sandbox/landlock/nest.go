package landlock

import "github.com/dshsim/dshsim/sandbox/internal/llsys"

// NestRights is what the layer nested under a restricted thread's domain
// handles and grants (see [NewNestRuleset]), for a ruleset of ABI abi and
// given whether the kernel (and the cap in use) offers scopes (ABI 6).
//
// From ABI 2 the layer handles [AccessRefer] and grants it beneath "/"
// (granted): Landlock denies reparenting (a rename or link across
// directories) in every layer that does not grant it, handled or not, so a
// layer without that grant would refuse what the policy's own layer allows.
// With scopes it also scopes signals, so the command may not signal a
// process outside its own domain, the thread above it included. On ABI 1,
// where reparenting is refused by the policy's layer anyway and an empty
// ruleset is refused, it handles the one right no command of ours holds
// (creating a block device needs CAP_MKNOD, which a confined command never
// has). Either way the layer narrows nothing the policy grants; its
// boundary is what counts. Pure.
func NestRights(abi int, scopes bool) (handled, scoped, granted uint64) {
	if abi >= 2 {
		handled, granted = AccessRefer, AccessRefer
	} else {
		handled = AccessMakeBlock
	}
	if scopes {
		scoped = ScopeSignal
	}
	return handled, scoped, granted
}

// NewNestRuleset builds the ruleset a command enforces on itself before its
// first instruction, one layer below the domain of the thread that started
// it ([NestRights]), for a kernel of ABI kernel capped at abiCap (0 = no
// cap). Its purpose is the domain boundary itself: Landlock lets a domain
// trace, and (with the scope) signal, only itself and the domains nested
// below it, so a command in a layer of its own cannot trace or signal the
// restricted thread it was started from, nor the rest of the process that
// thread belongs to, nor a command of another call (each gets a layer of
// its own).
func NewNestRuleset(kernel, abiCap int) (*Ruleset, error) {
	abi := EffectiveABI(kernel, abiCap)
	handled, scoped, granted := NestRights(abi, ScopeAvailable(kernel, abiCap) == nil)
	fd, err := llsys.CreateRuleset(handled, scoped)
	if err != nil {
		return nil, rulesetError(err)
	}
	rs := &Ruleset{FD: fd, ABI: abi}
	if granted != 0 {
		pfd, _, _, err := llsys.OpenPath("/")
		if err != nil {
			rs.Close()
			return nil, ruleOpenError("/", err)
		}
		defer llsys.Close(pfd)
		if err := llsys.AddPathBeneath(fd, pfd, granted); err != nil {
			rs.Close()
			return nil, rulesetError(err)
		}
	}
	return rs, nil
}
