package wazero

// cappedBuffer keeps the first limit bytes written to it and notes whether
// more came. Writes never fail, so the guest cannot tell it was cut off
// (as with the native backend's capture).
type cappedBuffer struct {
	buf       []byte
	limit     int
	truncated bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	room := b.limit - len(b.buf)
	if len(p) > room {
		b.buf = append(b.buf, p[:max(room, 0)]...)
		b.truncated = true
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}
