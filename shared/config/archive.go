package config

// DefaultArchiveDays is how long accepted events stay in the archive;
// MaxArchiveDays bounds archive.days.
const (
	DefaultArchiveDays = 30
	MaxArchiveDays     = 3650
)

// Archive keeps every accepted event (body, attributes, received time) in
// S3, so an operator can replay it to a destination later.
type Archive struct {
	// Days is how long an archived event is kept (the bucket's lifecycle
	// expiration); 0 turns the archive off. Default DefaultArchiveDays.
	Days *int `json:"days,omitempty"`
}

// RetentionDays is how many days an archived event is kept; 0 means the
// archive is off.
func (a Archive) RetentionDays() int {
	if a.Days == nil {
		return DefaultArchiveDays
	}
	return *a.Days
}

// Enabled reports whether accepted events are archived.
func (a Archive) Enabled() bool { return a.RetentionDays() > 0 }

func (a *Archive) validate(p *problems) {
	if a.Days != nil && (*a.Days < 0 || *a.Days > MaxArchiveDays) {
		p.add("archive.days", "%d is out of range; use 1 to %d days, or 0 to turn the archive off (default %d)", *a.Days, MaxArchiveDays, DefaultArchiveDays)
	}
}
