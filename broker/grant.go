package broker

import "github.com/apysup/apysup/plan"

// Texts of a grant_denied refusal. They say which argument, or that the
// budget is spent; never what the grant allows.
const (
	grantDeniedArguments = "the capability's grant does not allow these arguments"
	grantDeniedArgument  = "the capability's grant does not allow the argument at "
	grantDeniedBudget    = "the capability's grant allows no more calls in this run (its max_calls)"
)

// admitGrant is the admission step between the input schema and approval
// (SPEC.md section 5, 6 -> 7): the grant's arguments schema, the handler's
// own grant check (GrantChecker), then the grant's call budget. It returns
// "" to go on, or the message of a grant_denied refusal.
//
// A call takes its place in the budget here, so that concurrent calls
// never exceed it, and gives it back if it ends denied (finish): only a
// call that reached its handler spends the budget. A call that arrives
// while the budget is held by calls waiting for approval is refused.
func (b *Broker) admitGrant(rc *receiptDraft, c *plan.Capability, args any) string {
	policy, ok := b.cfg.Plan.Policy(c.Name())
	if !ok {
		return Message(CodeGrantDenied) // a Plan always has one; fail closed
	}
	if pointer, ok := policy.CheckArguments(args); !ok {
		return argumentRefused(pointer)
	}
	if h, _ := b.cfg.Handlers.lookup(c.Handler()); h != nil {
		if gc, ok := h.(GrantChecker); ok {
			if pointer, ok := gc.CheckGrant(args); !ok {
				return argumentRefused(pointer)
			}
		}
	}
	if max := policy.MaxCalls(); max > 0 {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.grantCalls[c.Name()] >= max {
			return grantDeniedBudget
		}
		b.grantCalls[c.Name()]++
		rc.grantHeld = true
	}
	return ""
}

// releaseGrantLocked gives back the budget place of a call that ended
// without reaching its handler (a Provider's denial did reach it).
func (b *Broker) releaseGrantLocked(rc *receiptDraft, status string) {
	if rc.grantHeld && status == StatusDenied && !rc.dispatched {
		b.grantCalls[rc.call.capability]--
		rc.grantHeld = false
	}
}

func argumentRefused(pointer string) string {
	if pointer == "" || len(pointer) > plan.MaxPointerBytes {
		return grantDeniedArguments
	}
	return grantDeniedArgument + pointer
}
