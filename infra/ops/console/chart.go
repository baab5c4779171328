package console

import (
	"fmt"
	"time"

	"github.com/hookfan/hookfan/infra/ops/operator"
)

// chartView is a lane's 24-hour chart as an inline SVG draws it: a bar an
// hour, deliveries stacked on failures.
type chartView struct {
	Bars          []bar
	Max           float64
	Width, Height int
	Total, Failed float64
	HasData       bool
	Label         string
}

type bar struct {
	X, W         int
	OKY, OKH     int
	FailY, FailH int
	Title        string
}

const (
	chartW, chartH = 240, 48
	barW           = chartW / operator.ChartHours
)

func newChart(c operator.Chart) chartView {
	v := chartView{Width: chartW, Height: chartH, HasData: c.HasData}
	for i := range operator.ChartHours {
		v.Max = max(v.Max, c.Succeeded[i]+c.Failed[i])
		v.Total += c.Succeeded[i] + c.Failed[i]
		v.Failed += c.Failed[i]
	}
	scale := 0.0
	if v.Max > 0 {
		scale = float64(chartH) / v.Max
	}
	for i := range operator.ChartHours {
		fh := int(c.Failed[i]*scale + 0.5)
		oh := int((c.Succeeded[i]+c.Failed[i])*scale+0.5) - fh
		at := c.Start.Add(time.Duration(i) * time.Hour)
		v.Bars = append(v.Bars, bar{X: i * barW, W: barW - 1, FailY: chartH - fh, FailH: fh, OKY: chartH - fh - oh, OKH: oh,
			Title: fmt.Sprintf("%s: %.0f delivered, %.0f failed", at.UTC().Format("15:04 UTC"), c.Succeeded[i], c.Failed[i])})
	}
	v.Label = fmt.Sprintf("last 24 hours: %.0f attempts, %.0f failed", v.Total, v.Failed)
	return v
}
