package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pod(ready bool, terminating bool) *corev1.Pod {
	p := &corev1.Pod{}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if terminating {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

// The process of a Deployment's pod runs while the pod is ready and stops when it starts terminating (the kubelet's
// SIGTERM): infer-operator as Ascend/mind-cluster component/infer-operator build/infer-operator.yaml runs it.
func TestServing(t *testing.T) {
	cases := []struct {
		name string
		pods []*corev1.Pod
		want bool
	}{
		{"no pod", nil, false},
		{"not ready yet", []*corev1.Pod{pod(false, false)}, false},
		{"ready", []*corev1.Pod{pod(true, false)}, true},
		{"terminating", []*corev1.Pod{pod(true, true)}, false},
		{"one terminating, its successor ready", []*corev1.Pod{pod(true, true), pod(true, false)}, true},
	}
	for _, c := range cases {
		if got := serving(c.pods); got != c.want {
			t.Errorf("%s: serving = %v, want %v", c.name, got, c.want)
		}
	}
}

// Each time a pod serves again the controllers start from nothing (a new start), and they stop before that.
func TestLoopStartsAndStopsFromNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{})
	var up atomic.Bool
	events := make(chan string, 8)
	start := func(runCtx context.Context) error {
		events <- "start"
		<-runCtx.Done()
		events <- "stop"
		return nil
	}
	result := make(chan error, 1)
	go func() {
		result <- loop(ctx, changed, up.Load, start)
	}()
	step := func(serving bool) {
		up.Store(serving)
		changed <- struct{}{}
	}
	step(true)
	if e := <-events; e != "start" {
		t.Fatalf("first event %q, want start", e)
	}
	step(false)
	if e := <-events; e != "stop" {
		t.Fatalf("event %q, want stop", e)
	}
	step(true)
	if e := <-events; e != "start" {
		t.Fatalf("event %q, want a second start", e)
	}
	cancel()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("loop: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("loop did not end with its context")
	}
	if e := <-events; e != "stop" {
		t.Fatalf("event %q, want stop at the end", e)
	}
}
