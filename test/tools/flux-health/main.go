// flux-health evaluates Flux kustomize-controller's custom health checks (Kustomization
// .spec.healthCheckExprs) on objects, with the evaluator the controller itself runs:
// github.com/fluxcd/pkg/runtime/cel StatusEvaluator (RFC 0009: the built-in observedGeneration
// rule first, then inProgress, failed, current; none true is InProgress). The tests
// (test/flux-health.test.ts) build it and feed it the example's expressions and the Rollout
// objects bootcplan wrote; nothing here decides a status itself.
//
// stdin: {"check": {"apiVersion", "kind", "current", "inProgress", "failed"}, "objects": [...]}
// stdout: one kstatus status per object, one per line (Current, InProgress, Failed), or
// "Error: <message>" when the evaluation failed (as the controller would report it).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type input struct {
	Check   kustomize.CustomHealthCheck `json:"check"`
	Objects []map[string]any            `json:"objects"`
}

func main() {
	var in input
	dec := json.NewDecoder(os.Stdin)
	// Numbers as int64/float64 the way the controller's unstructured objects hold them.
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "flux-health: reading the input: %v\n", err)
		os.Exit(2)
	}
	eval, err := cel.NewStatusEvaluator(&in.Check.HealthCheckExpressions)
	if err != nil {
		fmt.Fprintf(os.Stderr, "flux-health: %v\n", err)
		os.Exit(2)
	}
	for _, o := range in.Objects {
		obj, err := asUnstructured(o)
		if err != nil {
			fmt.Fprintf(os.Stderr, "flux-health: %v\n", err)
			os.Exit(2)
		}
		res, err := eval.Evaluate(context.Background(), obj)
		if err != nil {
			fmt.Printf("Error: %v\n", err)
			continue
		}
		fmt.Println(res.Status)
	}
}

// asUnstructured converts json.Number values as the API machinery's JSON decoding does
// (integers to int64, other numbers to float64).
func asUnstructured(o map[string]any) (*unstructured.Unstructured, error) {
	v, err := convert(o)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: v.(map[string]any)}, nil
}

func convert(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := convert(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case []any:
		for i, e := range t {
			c, err := convert(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, nil
		}
		return t.Float64()
	default:
		return v, nil
	}
}
