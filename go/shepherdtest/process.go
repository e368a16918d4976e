package shepherdtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyTimeout bounds the wait for the ready line.
const readyTimeout = 30 * time.Second

// stopTimeout bounds a clean stop before the process is killed.
const stopTimeout = 10 * time.Second

// tailLines is how much of the server's stderr a launch failure quotes.
const tailLines = 40

// readyLine is the JSON line `shepherd serve --ready-json` prints once every listener is bound.
type readyLine struct {
	Shepherd      string `json:"shepherd"`
	Pid           int    `json:"pid"`
	Ports         []int  `json:"ports"`
	ConnectString string `json:"connect_string"`
	ControlsURL   string `json:"controls_url"`
	ControlsToken string `json:"controls_token"`
}

// process is one running `shepherd serve`. Its stdin is a pipe held open here: the server is
// started with --exit-with-stdin, so closing it (or this process dying) stops the server.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready readyLine
	done  chan struct{} // closed once the process has been waited for
	tail  *tail
}

// tail keeps the last lines of the server's stderr.
type tail struct {
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n  ")
}

// startProcess runs args and waits for the ready line. An error names the reason, the command
// line and the tail of stderr.
func startProcess(args []string) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	command := strings.Join(args, " ")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("shepherdtest: cannot start the shepherd binary (%v); command: %s", err, command)
	}
	p := &process{cmd: cmd, stdin: stdin, done: make(chan struct{}), tail: &tail{done: make(chan struct{})}}
	go p.tail.read(stderr)
	lines := make(chan string, 1)
	go func() {
		in := bufio.NewReader(stdout)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			close(lines)
		} else {
			lines <- line
		}
		// Nothing else is printed in this mode; drain all the same, so the server never
		// blocks on a full pipe.
		_, _ = io.Copy(io.Discard, in)
	}()
	go func() {
		// Wait only after stdout and stderr are read to the end (as exec.Cmd requires).
		<-p.tail.done
		_ = cmd.Wait()
		close(p.done)
	}()
	var reason string
	select {
	case line, ok := <-lines:
		if !ok {
			<-p.done
			reason = fmt.Sprintf("it exited with status %d before its ready line", cmd.ProcessState.ExitCode())
			break
		}
		if err := json.Unmarshal([]byte(line), &p.ready); err != nil || p.ready.Shepherd != "ready" || len(p.ready.Ports) == 0 {
			reason = "it printed something other than a ready line: " + strings.TrimSpace(line)
			break
		}
		return p, nil
	case <-time.After(readyTimeout):
		reason = fmt.Sprintf("no ready line within %v", readyTimeout)
	}
	p.kill()
	msg := fmt.Sprintf("shepherdtest: shepherd did not start: %s; command: %s", reason, command)
	if s := p.tail.String(); s != "" {
		msg += "; stderr:\n  " + s
	}
	return nil, fmt.Errorf("%s", msg)
}

func (t *tail) read(r io.Reader) {
	defer close(t.done)
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		t.mu.Lock()
		if len(t.lines) == tailLines {
			t.lines = t.lines[1:]
		}
		t.lines = append(t.lines, scanner.Text())
		t.mu.Unlock()
	}
	// A line too long for the scanner: keep reading so the server never blocks.
	_, _ = io.Copy(io.Discard, r)
}

// stop closes the server's stdin (a clean stop, as SIGTERM), then sends SIGTERM, then kills it,
// each after a bounded wait; it returns once the process has exited.
func (p *process) stop() {
	_ = p.stdin.Close()
	if p.waitFor(stopTimeout / 2) {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if p.waitFor(stopTimeout / 2) {
		return
	}
	p.kill()
}

func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	p.waitFor(stopTimeout)
}

func (p *process) waitFor(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}
