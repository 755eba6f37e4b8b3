package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
)

type echoBroker struct{}

func (echoBroker) Call(_ context.Context, frame []byte) *broker.Response {
	return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: "capability-1", Status: broker.StatusOK, Result: json.RawMessage(`{}`)}
}

// A channel answers each call id once; a repeat is a replay, never a second
// dispatch, and a wrong credential learns nothing but "unauthenticated".
func ExampleRegistry_Dispatch() {
	reg := rpc.NewRegistry(rpc.RegistryConfig{})
	plan := "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	ch, credential, err := reg.Open(rpc.ChannelConfig{
		ChannelID: "chn-1", InvocationID: "inv-1", ExecutionID: "run-1", PlanSHA256: plan,
		Expiry: time.Now().Add(time.Minute), PeerUID: 1000, Dispatcher: echoBroker{},
	})
	if err != nil {
		panic(err)
	}
	defer reg.Close(ch.ID())

	body := []byte(`{"schema_version":"apysup.rpc.v1","channel_id":"chn-1","invocation_id":"inv-1",` +
		`"execution_id":"run-1","plan_sha256":"` + plan + `",` +
		`"call":{"call_id":"capability-1","capability":"echo.say","arguments":{}}}`)
	for range 2 {
		status, resp := reg.Dispatch(context.Background(), 1000, credential, body)
		fmt.Println(status, string(resp))
	}
	status, resp := reg.Dispatch(context.Background(), 1000, make([]byte, rpc.CredentialBytes), body)
	fmt.Println(status, string(resp))
	// Output:
	// 200 {"status":"completed","broker_response":{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{}}}
	// 200 {"status":"completed","broker_response":{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{}},"replayed":true}
	// 401 {"status":"rejected","error_code":"unauthenticated"}
}
