// Package defaults fills a configuration's unset fields.
package defaults

// Positive returns v if it is above zero, else d: a limit, size or
// interval as configured, or its default when it is unset (zero) or
// meaningless (negative).
func Positive[T ~int | ~int32 | ~int64 | ~float64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}
