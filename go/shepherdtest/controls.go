package shepherdtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// ControlError is a test control the server refused: Status is the HTTP status (404 for an
// unknown session or member, 409 for a conflict such as a session with no connection) and
// Message the server's {"error": ...}.
type ControlError struct {
	Path    string
	Status  int
	Message string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("shepherdtest: test control %s answered %d: %s", e.Path, e.Status, e.Message)
}

// controlsClient has a timeout on every call: no control can hang a test.
var controlsClient = &http.Client{Timeout: 30 * time.Second}

// control sends one call to the test controls and decodes a 2xx answer into out (if non-nil).
func control(url, token, method, path string, out interface{}) error {
	req, err := http.NewRequest(method, url+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := controlsClient.Do(req)
	if err != nil {
		return fmt.Errorf("shepherdtest: test control %s failed: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("shepherdtest: test control %s: reading the answer: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		msg := string(body)
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return &ControlError{Path: path, Status: resp.StatusCode, Message: msg}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("shepherdtest: test control %s answered %q: %w", path, body, err)
	}
	return nil
}

// sessionPath is a session id as the controls read it: ZooKeeper's hex form, unsigned.
func sessionPath(id int64) string {
	return "/sessions/0x" + strconv.FormatUint(uint64(id), 16)
}
