package bot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

var logger = struct {
	sync.Mutex
	out  io.Writer
	name string
}{out: os.Stderr}

// Log writes one event to stderr as one JSON object on one line, like the arena's other bots:
// {"event":"bot_serving","bot":"go-simple","port":50051}. The fields come in pairs, a key and its value;
// the arena keeps what a bot writes to stderr as its log. Safe from any goroutine.
func Log(event string, fields ...any) {
	var line bytes.Buffer
	line.WriteString(`{"event":`)
	writeJSON(&line, event)
	logger.Lock()
	defer logger.Unlock()
	if logger.name != "" {
		line.WriteString(`,"bot":`)
		writeJSON(&line, logger.name)
	}
	for i := 0; i < len(fields); i += 2 {
		line.WriteByte(',')
		writeJSON(&line, fmt.Sprint(fields[i]))
		line.WriteByte(':')
		if i+1 < len(fields) {
			writeJSON(&line, fields[i+1])
		} else {
			line.WriteString("null")
		}
	}
	line.WriteString("}\n")
	_, _ = logger.out.Write(line.Bytes())
}

func writeJSON(line *bytes.Buffer, value any) {
	if err, ok := value.(error); ok {
		value = err.Error()
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		encoded, _ = json.Marshal(fmt.Sprint(value))
	}
	line.Write(encoded)
}

func setLogName(name string) {
	logger.Lock()
	logger.name = name
	logger.Unlock()
}
