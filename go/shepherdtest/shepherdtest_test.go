package shepherdtest_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"example.invalid/shepherd/go/shepherdtest"
	"github.com/samuel/go-zookeeper/zk"
)

// wait bounds every wait for an event in these tests; none is a sleep.
const wait = 30 * time.Second

// connect opens a go-zookeeper connection, waits for its session and closes it at cleanup.
func connect(t *testing.T, servers []string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	return connectWith(t, servers, 6*time.Second)
}

// connectWith is connect asking for another session timeout.
func connectWith(t *testing.T, servers []string, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	awaitState(t, events, zk.StateHasSession)
	return conn, events
}

// awaitState reads session events until one has the state wanted, within the bound.
func awaitState(t *testing.T, events <-chan zk.Event, wanted zk.State) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case event := <-events:
			if event.Type == zk.EventSession && event.State == wanted {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within %v", wanted, wait)
		}
	}
}

// go-zookeeper's lock recipe, contended by four goroutines with a connection each: never two
// holders at once, and every acquisition made.
func TestLockAcrossGoroutines(t *testing.T) {
	srv := shepherdtest.Start(t)
	const goroutines, rounds = 4, 5
	var holders, maxHolders, acquired int32
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		conn, _ := connect(t, srv.Servers())
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock := zk.NewLock(conn, "/locks/mutex", zk.WorldACL(zk.PermAll))
			for r := 0; r < rounds; r++ {
				if err := lock.Lock(); err != nil {
					errs <- err
					return
				}
				now := atomic.AddInt32(&holders, 1)
				for {
					seen := atomic.LoadInt32(&maxHolders)
					if now <= seen || atomic.CompareAndSwapInt32(&maxHolders, seen, now) {
						break
					}
				}
				atomic.AddInt32(&acquired, 1)
				runtime.Gosched()
				atomic.AddInt32(&holders, -1)
				if err := lock.Unlock(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * wait):
		t.Fatal("the lock rounds did not finish in time")
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if maxHolders != 1 || acquired != goroutines*rounds {
		t.Fatalf("max holders %d (want 1), acquisitions %d (want %d)", maxHolders, acquired, goroutines*rounds)
	}
}

// A server-side expiry is seen by go-zookeeper as StateExpired, and the session's ephemeral
// is gone; an unknown session gets the controls' 404, at once.
func TestExpireSessionSeenByClient(t *testing.T) {
	srv := shepherdtest.Start(t)
	conn, events := connect(t, srv.Servers())
	if _, err := conn.Create("/mine", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := srv.ExpireSession(conn.SessionID()); err != nil {
		t.Fatal(err)
	}
	awaitState(t, events, zk.StateExpired)
	other, _ := connect(t, srv.Servers())
	if ok, _, err := other.Exists("/mine"); err != nil || ok {
		t.Fatalf("the expired session's ephemeral: exists=%v err=%v", ok, err)
	}

	var refused *shepherdtest.ControlError
	if err := srv.ExpireSession(0x1234); !errors.As(err, &refused) || refused.Status != 404 {
		t.Fatalf("expiring an unknown session: %v, want a ControlError with 404", err)
	}
}

// A cut connection: go-zookeeper reconnects and resumes the same session.
func TestCloseConnectionKeepsSession(t *testing.T) {
	srv := shepherdtest.Start(t, shepherdtest.InMemory())
	conn, events := connect(t, srv.Servers())
	session := conn.SessionID()
	if err := srv.CloseConnection(session); err != nil {
		t.Fatal(err)
	}
	awaitState(t, events, zk.StateDisconnected)
	awaitState(t, events, zk.StateHasSession)
	if conn.SessionID() != session {
		t.Fatalf("session after the cut 0x%x, want 0x%x", conn.SessionID(), session)
	}
}

// Restart keeps the address and the data.
func TestRestartKeepsData(t *testing.T) {
	srv := shepherdtest.Start(t)
	addr := srv.Addr()
	conn, _ := connect(t, srv.Servers())
	if _, err := conn.Create("/kept", []byte("data"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// conn stays open (its cleanup closes it; go-zookeeper's Close must run only once).
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.Addr() != addr {
		t.Fatalf("address after restart %s, want %s", srv.Addr(), addr)
	}
	again, _ := connect(t, srv.Servers())
	data, _, err := again.Get("/kept")
	if err != nil || !bytes.Equal(data, []byte("data")) {
		t.Fatalf("after restart: %q, %v", data, err)
	}
}

// An ensemble on free ports, which need not be consecutive, restarts with every member on its
// own port and the data kept.
func TestEnsembleRestartKeepsPorts(t *testing.T) {
	srv := shepherdtest.Start(t, shepherdtest.Members(3))
	ports := srv.Ports()
	conn, _ := connect(t, srv.Servers())
	if _, err := conn.Create("/ensemble-kept", []byte("data"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if got := srv.Ports(); fmt.Sprint(got) != fmt.Sprint(ports) {
		t.Fatalf("ports after restart %v, want %v", got, ports)
	}
	again, _ := connect(t, srv.Servers())
	data, _, err := again.Get("/ensemble-kept")
	if err != nil || !bytes.Equal(data, []byte("data")) {
		t.Fatalf("after restart: %q, %v", data, err)
	}
}

// Failover across three members: the member the client is on stops; the client moves to
// another member with the same session.
func TestEnsembleFailover(t *testing.T) {
	srv := shepherdtest.Start(t, shepherdtest.Members(3))
	if len(srv.Servers()) != 3 {
		t.Fatalf("servers %v, want 3", srv.Servers())
	}
	conn, events := connect(t, srv.Servers())
	if _, err := conn.Create("/failover", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	session := conn.SessionID()
	member, err := srv.MemberOf(session)
	if err != nil || member < 1 || member > 3 {
		t.Fatalf("member of the session: %d, %v", member, err)
	}
	if err := srv.StopMember(member); err != nil {
		t.Fatal(err)
	}
	awaitState(t, events, zk.StateDisconnected)
	awaitState(t, events, zk.StateHasSession)
	if conn.SessionID() != session {
		t.Fatalf("session after failover 0x%x, want 0x%x", conn.SessionID(), session)
	}
	if now, err := srv.MemberOf(session); err != nil || now == member {
		t.Fatalf("the session is on member %d (%v), the stopped one was %d", now, err, member)
	}
	if _, _, err := conn.Get("/failover"); err != nil {
		t.Fatal(err)
	}
	if err := srv.StartMember(member); err != nil {
		t.Fatal(err)
	}
}

// A forced election disconnects every client, whichever member it is on, as a real
// ensemble's members all go LOOKING; the client comes back with its session.
func TestForcedElection(t *testing.T) {
	srv := shepherdtest.Start(t, shepherdtest.Members(3))
	conn, events := connect(t, srv.Servers())
	session := conn.SessionID()
	if err := srv.ElectMember(1); err != nil {
		t.Fatal(err)
	}
	awaitState(t, events, zk.StateDisconnected)
	awaitState(t, events, zk.StateHasSession)
	if conn.SessionID() != session {
		t.Fatalf("session after the election 0x%x, want 0x%x", conn.SessionID(), session)
	}
	if err := srv.ElectMember(9); err == nil {
		t.Fatal("electing member 9 of 3 succeeded")
	}
}

// A zoo.cfg setting is in force: maxSessionTimeout caps the timeout the client asked for.
func TestSettingInForce(t *testing.T) {
	srv := shepherdtest.Start(t, shepherdtest.InMemory(), shepherdtest.Setting("maxSessionTimeout", "4000"))
	conn, _ := connectWith(t, srv.Servers(), 20*time.Second)
	session, err := srv.Session(conn.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if session.TimeoutMs != 4000 {
		t.Fatalf("negotiated timeout %d ms, want maxSessionTimeout's 4000", session.TimeoutMs)
	}
}

// fatalTB stands in for a test's testing.TB to catch Start's t.Fatal: it records the message
// and ends the goroutine, as the real Fatal does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...interface{}) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatalf(format string, args ...interface{}) {
	f.Fatal(fmt.Sprintf(format, args...))
}

// startFailure runs Start with opts and returns the message it failed the test with.
func startFailure(t *testing.T, opts ...shepherdtest.Option) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		shepherdtest.Start(tb, opts...)
	}()
	<-done
	if tb.msg == "" {
		t.Fatal("Start did not fail")
	}
	return tb.msg
}

// A binary that is missing, or that exits, or an unknown setting, fails the test with the
// reason and the command line.
func TestLaunchFailures(t *testing.T) {
	msg := startFailure(t, shepherdtest.Binary("/nonexistent/shepherd"))
	if !strings.Contains(msg, "cannot start the shepherd binary") || !strings.Contains(msg, "command: /nonexistent/shepherd serve --ready-json") {
		t.Errorf("missing binary: %s", msg)
	}
	msg = startFailure(t, shepherdtest.Binary("/bin/false"))
	if !strings.Contains(msg, "exited with status 1 before its ready line") {
		t.Errorf("exiting binary: %s", msg)
	}
	msg = startFailure(t, shepherdtest.Setting("noSuchZooCfgKey", "1"))
	stderr := strings.Index(msg, "stderr:")
	if !strings.Contains(msg, "exited with status 2") || stderr < 0 || !strings.Contains(msg[stderr:], "noSuchZooCfgKey") {
		t.Errorf("unknown setting: %s", msg)
	}
}
