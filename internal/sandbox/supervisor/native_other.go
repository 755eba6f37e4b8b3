//go:build !linux

package supervisor

import (
	"context"
	"errors"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/native"
)

// nativeState is empty: off Linux there is no native backend.
type nativeState struct{}

func (*nativeState) close() error { return nil }

// sweepNative has nothing to sweep off Linux.
func (s *Supervisor) sweepNative() {}

// runNative refuses: the native backend needs Linux (the doctor's one
// failed check, native_unsupported_os). Never a fallback to wazero.
func (s *Supervisor) runNative(context.Context, *broker.Broker, string, Request, sandbox.Job, string, *teardown) (*sandbox.Outcome, error) {
	c := doctor.Quick().FirstFailure()
	err := &native.Error{Status: sandbox.StatusRefused, Code: c.Status, Err: errors.New(c.Detail + ": " + c.Fix)}
	return failedOutcome(err.Status, err.Code), err
}

func (s *Supervisor) prepareNative() error { return nil }

// PoolState is empty: off Linux there is no native pool.
func (s *Supervisor) PoolState() PoolState { return PoolState{} }
