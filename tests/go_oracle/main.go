// The Go oracle: answers questions about Go's semantics with Go's own standard library,
// so that kubelet_winnet/_kubelet/golang.py is checked against Go rather than against a
// second reading of Go's documentation. Standard library only; no network.
//
// Protocol: one JSON object per line on stdin, one JSON answer per line on stdout. Strings
// travel as base64 of their bytes (a Go string is bytes, not necessarily UTF-8); integers
// travel as decimal strings (JSON numbers lose int64 precision in many readers). Each
// request carries a batch ("items") so that one round trip answers many cases.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type request struct {
	Op    string            `json:"op"`
	Items []json.RawMessage `json:"items"`
}

type answer struct {
	Out   []any  `json:"out,omitempty"`
	Error string `json:"error,omitempty"`
}

func unb64(raw json.RawMessage) (string, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return "", err
	}
	data, err := base64.StdEncoding.DecodeString(text)
	return string(data), err
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func parseInt64(raw json.RawMessage) (int64, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return 0, err
	}
	return strconv.ParseInt(text, 10, 64)
}

// printRanges lists the inclusive [lo, hi] ranges of code points strconv.IsPrint accepts,
// and fails if unicode.IsPrint disagrees anywhere (they are documented to be the same).
// spewFNV: FNV-32a of the %#v print of a byte slice, as lowercase hex.
func spewFNV(data []byte) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "([]uint8)%v", data)
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}

// int64Multiply, positiveScaleInt64 and negativeScaleInt64 (apimachinery
// pkg/api/resource/amount.go) and scaledValue (scale_int.go, the wrapping form of 1.37
// and before), written out here so that Go's int64 overflow, truncating division and
// math/big's Int64 and DivMod decide what ScaledValue returns past the int64 range.
func int64Multiply(a, b int64) (int64, bool) {
	if a == 0 || b == 0 || a == 1 || b == 1 {
		return a * b, true
	}
	if a == math.MinInt64 || b == math.MinInt64 {
		return 0, false
	}
	c := a * b
	return c, c/b == a
}

func positiveScale(base int64, scale int64) (int64, bool) {
	switch scale {
	case 0:
		return base, true
	case 1, 2, 3, 6, 9:
		return int64Multiply(base, int64(math.Pow10(int(scale))))
	}
	value := base
	var ok bool
	for i := int64(0); i < scale; i++ {
		if value, ok = int64Multiply(value, 10); !ok {
			return 0, false
		}
	}
	return value, true
}

func negativeScale(base int64, scale int64) int64 {
	value := base
	fraction := false
	for i := int64(0); i < scale; i++ {
		if !fraction && value%10 != 0 {
			fraction = true
		}
		value = value / 10
		if value == 0 {
			if !fraction {
				return 0
			}
			if base > 0 {
				return 1
			}
			return -1
		}
	}
	if fraction {
		if base > 0 {
			value++
		} else {
			value--
		}
	}
	return value
}

func scaledValue(unscaled *big.Int, scale, newScale int64) int64 {
	dif := scale - newScale
	if dif == 0 {
		return unscaled.Int64()
	}
	if dif < 0 {
		return unscaled.Int64() * int64(math.Pow10(int(-dif)))
	}
	if unscaled.Cmp(big.NewInt(math.MaxInt64)) < 0 && dif < 19 {
		divide := int64(math.Pow10(int(dif)))
		result := unscaled.Int64() / divide
		if unscaled.Int64()%divide != 0 {
			return result + 1
		}
		return result
	}
	divisor := new(big.Int).Exp(big.NewInt(10), big.NewInt(dif), nil)
	result, remainder := new(big.Int).DivMod(unscaled, divisor, new(big.Int))
	if remainder.Sign() != 0 {
		return result.Int64() + 1
	}
	return result.Int64()
}

// scaledValueOf: [form, value, scale, target] -> Quantity.ScaledValue(target) of a
// quantity stored as an int64Amount ("int64": value * 10^scale, AsScaledInt64) or an
// inf.Dec ("dec": value * 10^-scale, any size).
func scaledValueOf(item json.RawMessage) (int64, error) {
	var parts []string
	if err := json.Unmarshal(item, &parts); err != nil || len(parts) != 4 {
		return 0, fmt.Errorf("scaled_value wants [form, value, scale, target]")
	}
	scale, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return 0, err
	}
	target, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return 0, err
	}
	switch parts[0] {
	case "int64":
		value, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			return 0, err
		}
		if scale < target {
			return negativeScale(value, target-scale), nil
		}
		result, _ := positiveScale(value, scale-target)
		return result, nil
	case "dec":
		unscaled, ok := new(big.Int).SetString(parts[1], 10)
		if !ok {
			return 0, fmt.Errorf("not an integer: %q", parts[1])
		}
		return scaledValue(unscaled, scale, -target), nil
	}
	return 0, fmt.Errorf("unknown form %q", parts[0])
}

func printRanges() ([]any, error) {
	var out []any
	start := rune(-1)
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		ok := r <= unicode.MaxRune && strconv.IsPrint(r)
		if r <= unicode.MaxRune && ok != unicode.IsPrint(r) {
			return nil, fmt.Errorf("strconv.IsPrint and unicode.IsPrint disagree on U+%04X", r)
		}
		switch {
		case ok && start < 0:
			start = r
		case !ok && start >= 0:
			out = append(out, []int32{start, r - 1})
			start = -1
		}
	}
	return out, nil
}

func handle(req request) ([]any, error) {
	out := make([]any, 0, len(req.Items))
	switch req.Op {
	case "version":
		return []any{runtimeVersion(), unicode.Version}, nil
	case "print_ranges":
		return printRanges()
	case "string_of_byte":
		// string(b) for every byte value: the conversion of an integer to a string.
		for i := 0; i < 256; i++ {
			b := byte(i)
			out = append(out, b64(string(rune(b))))
		}
		return out, nil
	}
	for _, item := range req.Items {
		switch req.Op {
		case "quote", "bytes", "json":
			s, err := unb64(item)
			if err != nil {
				return nil, err
			}
			switch req.Op {
			case "quote":
				out = append(out, b64(fmt.Sprintf("%q", s)))
			case "json":
				// encoding/json of the Go string and of the same bytes as a []byte.
				text, _ := json.Marshal(s)
				data, _ := json.Marshal([]byte(s))
				out = append(out, map[string]any{"string": b64(string(text)), "bytes": b64(string(data))})
			default:
				// len, utf8.ValidString, and utf8.DecodeRuneInString at every byte offset.
				var runes [][2]int
				for i := 0; i < len(s); i++ {
					r, size := utf8.DecodeRuneInString(s[i:])
					runes = append(runes, [2]int{int(r), size})
				}
				out = append(out, map[string]any{
					"len": len(s), "valid": utf8.ValidString(s), "runes": runes,
				})
			}
		case "format_map":
			// pkg/fieldpath FormatMap's steps, in the standard library: keys sorted as Go
			// sorts strings, "%v=%q\n" per key, the last newline trimmed.
			var encoded map[string]string
			if err := json.Unmarshal(item, &encoded); err != nil {
				return nil, err
			}
			m := map[string]string{}
			for k, v := range encoded {
				key, err := base64.StdEncoding.DecodeString(k)
				if err != nil {
					return nil, err
				}
				value, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					return nil, err
				}
				m[string(key)] = string(value)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			text := ""
			for _, k := range keys {
				text += fmt.Sprintf("%v=%q\n", k, m[k])
			}
			out = append(out, b64(strings.TrimSuffix(text, "\n")))
		case "int64":
			// [op, a, b]: Go's int64 arithmetic, which wraps on overflow.
			var parts []json.RawMessage
			if err := json.Unmarshal(item, &parts); err != nil || len(parts) != 3 {
				return nil, fmt.Errorf("int64 wants [op, a, b]")
			}
			var op string
			if err := json.Unmarshal(parts[0], &op); err != nil {
				return nil, err
			}
			a, err := parseInt64(parts[1])
			if err != nil {
				return nil, err
			}
			b, err := parseInt64(parts[2])
			if err != nil {
				return nil, err
			}
			var r int64
			switch op {
			case "add":
				r = a + b
			case "sub":
				r = a - b
			case "mul":
				r = a * b
			case "div":
				r = a / b
			case "rem":
				r = a % b
			case "ceil_div_float":
				// the downward API's division up to kubelet 1.37 (helpers.go)
				r = int64(math.Ceil(float64(a) / float64(b)))
			default:
				return nil, fmt.Errorf("unknown int64 op %q", op)
			}
			out = append(out, strconv.FormatInt(r, 10))
		case "scaled_value":
			r, err := scaledValueOf(item)
			if err != nil {
				return nil, err
			}
			out = append(out, strconv.FormatInt(r, 10))
		case "container_hash":
			// [name, image]: the container hash of kubelet 1.31+ (labels.go's hash and
			// hashWithoutResources annotations) rebuilt from the standard library:
			// encoding/json of a map (keys sorted), printed as go-spew's %#v prints a byte
			// slice ("([]uint8)" then fmt's %v of the bytes), FNV-32a, lowercase hex.
			var parts []json.RawMessage
			if err := json.Unmarshal(item, &parts); err != nil || len(parts) != 2 {
				return nil, fmt.Errorf("container_hash wants [name, image]")
			}
			name, err := unb64(parts[0])
			if err != nil {
				return nil, err
			}
			image, err := unb64(parts[1])
			if err != nil {
				return nil, err
			}
			data, err := json.Marshal(map[string]string{"name": name, "image": image})
			if err != nil {
				return nil, err
			}
			out = append(out, spewFNV(data))
		case "bytes_hash":
			// The same print and hash over any JSON text: what 1.26-1.30 apply to the
			// json.Marshal of the whole v1.Container.
			s, err := unb64(item)
			if err != nil {
				return nil, err
			}
			out = append(out, spewFNV([]byte(s)))
		case "json_field":
			// Whether json.Unmarshal puts {"<key>": 1} into a struct field tagged
			// `json:"<field>"`: encoding/json's case-blind match of a key and a name.
			var pair struct{ Key, Field string }
			if err := json.Unmarshal(item, &pair); err != nil {
				return nil, err
			}
			key, err := unb64(json.RawMessage(strconv.Quote(pair.Key)))
			if err != nil {
				return nil, err
			}
			kind := reflect.StructOf([]reflect.StructField{{
				Name: "F", Type: reflect.TypeOf(0),
				Tag:  reflect.StructTag(`json:"` + pair.Field + `"`),
			}})
			target := reflect.New(kind)
			doc, _ := json.Marshal(map[string]int{key: 1})
			if err := json.Unmarshal(doc, target.Interface()); err != nil {
				return nil, err
			}
			out = append(out, target.Elem().Field(0).Int() == 1)
		case "format_int":
			// %v and strconv.FormatInt of an int64, which must agree.
			n, err := parseInt64(item)
			if err != nil {
				return nil, err
			}
			v := fmt.Sprintf("%v", n)
			if d := strconv.FormatInt(n, 10); d != v {
				return nil, fmt.Errorf("%%v %s and FormatInt %s disagree", v, d)
			}
			out = append(out, v)
		default:
			return nil, fmt.Errorf("unknown op %q", req.Op)
		}
	}
	return out, nil
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for in.Scan() {
		var req request
		var ans answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			ans.Error = err.Error()
		} else if out, err := handle(req); err != nil {
			ans.Error = err.Error()
		} else {
			ans.Out = out
		}
		if err := enc.Encode(ans); err != nil {
			os.Exit(1)
		}
		w.Flush()
	}
}
