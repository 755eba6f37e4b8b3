package rpc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
)

// An approval waits in the controller while the guest's call blocks; a
// person (or a program) decides it from another process over the admin
// socket.
func ExampleApprovalServer() {
	dir, _ := os.MkdirTemp("", "apysup-example-")
	defer os.RemoveAll(dir)
	approvals := broker.NewApprovals(broker.ApprovalOptions{})
	l, err := rpc.ListenApprovalSocket(filepath.Join(dir, "admin.sock"))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := rpc.NewApprovalServer(approvals, rpc.ServerConfig{})
	go srv.Serve(l)
	defer srv.Close() // and the socket is gone

	// What the Broker does inside the guest's call.
	rec, _ := approvals.Request(broker.ApprovalRequest{
		ApprovalBinding: broker.ApprovalBinding{RunID: "run_1", PlanSHA256: "sha256:" + strings.Repeat("5d", 32),
			ParentCallID: "main", CallID: "main:program:1", Capability: "notes.put",
			ArgumentsSHA256: "sha256:" + strings.Repeat("a1", 32)},
		Preview: `{"text":"buy milk"}`, Lease: time.Minute})

	// What `apysup approvals` does.
	ctx := context.Background()
	client := rpc.NewApprovalClient(filepath.Join(dir, "admin.sock"), 10*time.Second)
	list, _ := client.List(ctx, 0)
	for _, p := range list.Pending {
		fmt.Println(p.State, p.Capability, p.CallID, p.PlanSHA256[:19], p.Preview)
	}
	decided, _ := client.Approve(ctx, rec.ID)
	fmt.Println(decided.State)
	_, err = client.Reject(ctx, rec.ID)
	fmt.Println(err)
	// Output:
	// waiting notes.put main:program:1 sha256:5d5d5d5d5d5d {"text":"buy milk"}
	// approved
	// approval_already_decided (approved)
}
