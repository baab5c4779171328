package devstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// EmulatorStateFile is the record of the persistent emulator in its state
// directory.
const EmulatorStateFile = "emulator.json"

// EmulatorState records a moto server that outlives the process that
// started it, so the next local stack reuses it and finds everything it
// held: queued events, delivery records, the archive, generated secrets.
type EmulatorState struct {
	URL       string    `json:"url"`
	PID       int       `json:"pid"`
	Log       string    `json:"log"`
	StartedAt time.Time `json:"started_at"`
}

// ReadEmulatorState reads dir's state file; ok is false when there is none.
func ReadEmulatorState(dir string) (s EmulatorState, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, EmulatorStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return EmulatorState{}, false, nil
	}
	if err != nil {
		return EmulatorState{}, false, fmt.Errorf("read emulator state: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil || s.URL == "" || s.PID <= 0 {
		return EmulatorState{}, false, fmt.Errorf("emulator state %s is unreadable (%v); remove it, stopping pid %d by hand if it runs", filepath.Join(dir, EmulatorStateFile), err, s.PID)
	}
	return s, true, nil
}
