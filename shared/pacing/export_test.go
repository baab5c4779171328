package pacing

// SetLeaseWait sets the hook a take runs as it is about to wait for the
// lease another record is fetching.
func SetLeaseWait(p *Pacer, f func()) { p.leaseWait = f }
