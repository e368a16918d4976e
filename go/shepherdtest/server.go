package shepherdtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is a running `shepherd serve` for one test. Start returns it; t.Cleanup stops it.
type Server struct {
	t       testing.TB
	cfg     config
	dataDir string

	mu      sync.Mutex
	proc    *process
	ports   []int
	servers []string
}

// Start starts a server on free loopback ports and registers its stop with t.Cleanup. By
// default it is a single member whose data directory is t.TempDir(), so Restart keeps the data.
// Start fails the test (t.Fatal) if the binary cannot be found or started, with the reason, the
// command line and the server's stderr.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{members: 1}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.members < 1 || cfg.members > 255 {
		t.Fatalf("shepherdtest: Members(%d) is not in 1..255", cfg.members)
	}
	s := &Server{t: t, cfg: cfg, dataDir: cfg.dataDir}
	if s.dataDir == "" && !cfg.inMemory {
		s.dataDir = t.TempDir()
	}
	// Registered before the start, so that it runs after (t.Cleanup is last in, first out)
	// anything the test registers later, such as closing its clients.
	t.Cleanup(func() { _ = s.Stop() })
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// Addr is member 1's client address, "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.Servers()[0] }

// Servers is every member's client address, member 1 first, as zk.Connect takes them.
func (s *Server) Servers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.servers...)
}

// Ports is every member's client port, member 1 first.
func (s *Server) Ports() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.ports...)
}

// DataDir is the data directory, or "" for a server in memory.
func (s *Server) DataDir() string { return s.dataDir }

// ExpireSession ends a session on the server now, exactly as its timeout would: its ephemerals
// go, its connection is closed, and the client then sees zk.StateExpired. An unknown session is
// a *ControlError with Status 404.
func (s *Server) ExpireSession(id int64) error { return s.post(sessionPath(id) + "/expire") }

// CloseConnection drops the session's connection and keeps the session: the client
// reconnects and resumes it.
func (s *Server) CloseConnection(id int64) error { return s.post(sessionPath(id) + "/close") }

// FreezeSession stops reading and writing the session's connection until ThawSession; its
// timeout keeps running.
func (s *Server) FreezeSession(id int64) error { return s.post(sessionPath(id) + "/freeze") }

// ThawSession ends a freeze; what was queued is delivered in order.
func (s *Server) ThawSession(id int64) error { return s.post(sessionPath(id) + "/thaw") }

// Session is what the server knows of one session (GET /sessions/{id} of the test controls).
type Session struct {
	// TimeoutMs is the negotiated session timeout.
	TimeoutMs int64 `json:"timeout_ms"`
	// Connected says whether the session has a connection now.
	Connected bool `json:"connected"`
	// Member is the member (1..n) its connection came in on, or 0 if it has none.
	Member int `json:"member"`
	// Ephemerals are the paths of its ephemeral nodes.
	Ephemerals []string `json:"ephemerals"`
}

// Session asks the server about one session; an unknown one is a *ControlError with 404.
func (s *Server) Session(id int64) (Session, error) {
	var session Session
	err := s.call("GET", sessionPath(id), &session)
	return session, err
}

// MemberOf is the member (1..n) a session's connection came in on, or 0 if it has none now.
func (s *Server) MemberOf(id int64) (int, error) {
	session, err := s.Session(id)
	return session.Member, err
}

// StopMember closes member i's listener and connections (1..n); sessions live on and move.
func (s *Server) StopMember(i int) error { return s.member(i, "stop") }

// StartMember listens again on a stopped member's port.
func (s *Server) StartMember(i int) error { return s.member(i, "start") }

// PartitionMember keeps member i's connections open but unanswered.
func (s *Server) PartitionMember(i int) error { return s.member(i, "partition") }

// HealMember ends member i's partition or isolation.
func (s *Server) HealMember(i int) error { return s.member(i, "heal") }

// IsolateMember cuts member i off from its peers, not its clients: after syncLimit it looks
// alone (its clients dropped), and if it led, the others elect another leader.
func (s *Server) IsolateMember(i int) error { return s.member(i, "isolate") }

// ElectMember forces an election that member i wins: every member looks (every client is
// disconnected), and after the election time i leads.
func (s *Server) ElectMember(i int) error { return s.member(i, "elect") }

// Stop stops the server (its data directory is kept until the test ends). Stopping a stopped
// server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.stop()
	}
	return nil
}

// Restart stops the server and starts it again on the same ports with the same data.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.start()
}

// start runs the binary; on a restart, on the ports of the last run.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && s.proc.alive() {
		return nil
	}
	binary, err := s.binary()
	if err != nil {
		return err
	}
	args := []string{binary, "serve", "--ready-json", "--exit-with-stdin", "--test-controls",
		"--bind", "127.0.0.1"}
	switch {
	case len(s.ports) > 1:
		// A restarted ensemble: each member back on its own port, consecutive or not.
		ports := make([]string, len(s.ports))
		for i, p := range s.ports {
			ports[i] = strconv.Itoa(p)
		}
		args = append(args, "--member-ports", strings.Join(ports, ","))
	case len(s.ports) == 1:
		args = append(args, "--port", strconv.Itoa(s.ports[0]))
	default:
		args = append(args, "--port", strconv.Itoa(s.cfg.port))
		if s.cfg.members > 1 {
			args = append(args, "--members", strconv.Itoa(s.cfg.members))
		}
	}
	if s.dataDir != "" {
		args = append(args, "--data-dir", s.dataDir)
	}
	// A test's data has to survive Restart, a process exit, not a power cut: not waiting for
	// the disk saves 15-25 ms of every start. Setting("forceSync", "yes") restores it.
	forceSync := false
	for _, kv := range s.cfg.settings {
		forceSync = forceSync || kv[0] == "forceSync"
	}
	if !forceSync && s.dataDir != "" {
		args = append(args, "--set", "forceSync=no")
	}
	for _, kv := range s.cfg.settings {
		args = append(args, "--set", kv[0]+"="+kv[1])
	}
	proc, err := startProcess(args)
	if err != nil {
		return err
	}
	if proc.ready.ControlsURL == "" || proc.ready.ControlsToken == "" {
		proc.stop()
		return errors.New("shepherdtest: the ready line has no test controls URL or token")
	}
	s.proc = proc
	s.ports = proc.ready.Ports
	s.servers = s.servers[:0]
	for _, p := range s.ports {
		s.servers = append(s.servers, "127.0.0.1:"+strconv.Itoa(p))
	}
	return nil
}

// binary is the Binary option, else $SHEPHERD_BIN, else `shepherd` on $PATH.
func (s *Server) binary() (string, error) {
	if s.cfg.binary != "" {
		return s.cfg.binary, nil
	}
	if env := os.Getenv("SHEPHERD_BIN"); env != "" {
		return env, nil
	}
	path, err := exec.LookPath("shepherd")
	if err != nil {
		return "", fmt.Errorf("shepherdtest: no shepherd binary: SHEPHERD_BIN is unset and %v; "+
			"build one with `cargo build --release --bin shepherd` and set SHEPHERD_BIN", err)
	}
	return path, nil
}

func (s *Server) member(i int, action string) error {
	if i < 1 || i > s.cfg.members {
		return fmt.Errorf("shepherdtest: member %d is not in 1..%d", i, s.cfg.members)
	}
	return s.post("/members/" + strconv.Itoa(i) + "/" + action)
}

func (s *Server) post(path string) error { return s.call("POST", path, nil) }

func (s *Server) call(method, path string, out interface{}) error {
	s.mu.Lock()
	proc := s.proc
	s.mu.Unlock()
	if proc == nil || !proc.alive() {
		return errors.New("shepherdtest: the server is not running")
	}
	return control(proc.ready.ControlsURL, proc.ready.ControlsToken, method, path, out)
}
