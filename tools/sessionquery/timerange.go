package sessionquery

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// isoTimestamp is upstream's accepted spelling of a time bound: date,
// hours and minutes, optional seconds and fraction, then Z or an offset.
var isoTimestamp = regexp.MustCompile(`^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?(Z|([+-])([0-9]{2}):([0-9]{2}))$`)

// timestamp is a parsed bound: whole milliseconds, and the fraction's
// digits past the milliseconds without trailing zeros.
type timestamp struct {
	ms        int64
	remainder string
}

// after orders two timestamps as upstream's compareTimestamps does.
func (a timestamp) after(b timestamp) bool {
	if a.ms != b.ms {
		return a.ms > b.ms
	}
	n := max(len(a.remainder), len(b.remainder))
	for i := range n {
		x, y := digitAt(a.remainder, i), digitAt(b.remainder, i)
		if x != y {
			return x > y
		}
	}
	return false
}

func digitAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return '0'
}

// parseTimestamp is upstream's parseIsoTimestamp; name is the bound
// ("time_from", "time_to") its errors name.
func parseTimestamp(name, s string) (timestamp, error) {
	m := isoTimestamp.FindStringSubmatch(s)
	if m == nil {
		return timestamp{}, invalidFilter("session " + name + " range must be an ISO 8601 timestamp with Z or a numeric offset")
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(m[i]) // digits only, or empty (0)
		return n
	}
	year, month, day, hour, minute, second := num(1), num(2), num(3), num(4), num(5), num(6)
	offHour, offMinute := num(10), num(11)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59 || offHour > 23 || offMinute > 59 {
		return timestamp{}, invalidFilter("session " + name + " range must be a valid ISO 8601 timestamp")
	}
	fraction := m[7]
	msDigits := (fraction + "000")[:3]
	if len(fraction) > 3 {
		msDigits = fraction[:3]
	}
	ms, _ := strconv.Atoi(msDigits)
	t := time.Date(year, time.Month(month), day, hour, minute, second, ms*int(time.Millisecond), time.UTC)
	offset := time.Duration(offHour)*time.Hour + time.Duration(offMinute)*time.Minute
	if m[9] == "-" {
		offset = -offset
	}
	rest := ""
	if len(fraction) > 3 {
		rest = strings.TrimRight(fraction[3:], "0")
	}
	return timestamp{ms: t.Add(-offset).UnixMilli(), remainder: rest}, nil
}

// daysIn is the number of days of month in year (Gregorian).
func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// timeRange reads time_from and time_to as upstream's timestampRange does:
// each bound parsed, from not after to. As bounds on whole-millisecond event
// times, a lower bound with digits past the milliseconds admits only the
// next millisecond on; an upper bound admits its own millisecond.
func timeRange(raw map[string]json.RawMessage) (from, to *int64, err error) {
	var bounds [2]*timestamp
	for i, key := range []string{"time_from", "time_to"} {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, nil, invalidFilter("session " + key + " range must be an ISO 8601 timestamp with Z or a numeric offset")
		}
		t, err := parseTimestamp(key, s)
		if err != nil {
			return nil, nil, err
		}
		bounds[i] = &t
	}
	if bounds[0] != nil && bounds[1] != nil && bounds[0].after(*bounds[1]) {
		return nil, nil, invalidFilter("session time range from must be less than or equal to to")
	}
	if b := bounds[0]; b != nil {
		ms := b.ms
		if b.remainder != "" {
			ms++
		}
		from = &ms
	}
	if b := bounds[1]; b != nil {
		to = &b.ms
	}
	return from, to, nil
}
