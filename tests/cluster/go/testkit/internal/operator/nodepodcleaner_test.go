package operator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func testNode(name string, ready corev1.ConditionStatus) *corev1.Node {
	n := &corev1.Node{}
	n.Name = name
	if ready != "" {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	}
	return n
}

func podOn(p *corev1.Pod, node string) *corev1.Pod {
	p.Spec.NodeName = node
	return p
}

// Models node_pod_cleaner_controller.go Reconcile + forceDeletePodsOnNode: on a node that is not Ready every pod
// labelled ascend-infer-operator=true is deleted with grace period 0 at once; other pods, and pods on other nodes,
// stay. A Ready node is left alone.
func TestNotReadyNodeLosesItsOperatorPodsAtOnce(t *testing.T) {
	var graces []int64
	funcs := &interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object,
		opts ...client.DeleteOption) error {
		o := &client.DeleteOptions{}
		o.ApplyOptions(opts)
		if o.GracePeriodSeconds == nil {
			graces = append(graces, -1)
		} else {
			graces = append(graces, *o.GracePeriodSeconds)
		}
		return c.Delete(ctx, obj, opts...)
	}}
	stranger := podOn(testPod("decode", 0, 2), "dead")
	stranger.Labels = map[string]string{"app": "x"}
	c := testClient(t, funcs, testNode("dead", corev1.ConditionUnknown), testNode("alive", corev1.ConditionTrue),
		podOn(testPod("decode", 0, 0), "dead"), podOn(testPod("decode", 0, 1), "alive"), stranger)
	r := &nodePodCleaner{client: c, pods: c}
	for _, node := range []string{"alive", "dead", "gone"} {
		res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: node}})
		if err != nil || res.RequeueAfter != 0 {
			t.Fatalf("node %s: %v, %v", node, res, err)
		}
	}
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	if len(graces) != 1 || graces[0] != 0 {
		t.Errorf("deletes with grace periods %v, want one with 0", graces)
	}
	if len(left) != 2 {
		t.Errorf("pods left %v, want the one on the Ready node and the one without the operator label", left)
	}
}

// Models node_pod_cleaner_controller.go Reconcile: a failed force-delete is retried after DefaultReEnqueueInterval
// (1 s), as a requeue, not an error.
func TestFailedForceDeleteIsRequeuedAfterASecond(t *testing.T) {
	funcs := &interceptor.Funcs{Delete: func(context.Context, client.WithWatch, client.Object,
		...client.DeleteOption) error {
		return context.DeadlineExceeded
	}}
	c := testClient(t, funcs, testNode("dead", corev1.ConditionFalse), podOn(testPod("decode", 0, 0), "dead"))
	r := &nodePodCleaner{client: c, pods: c}
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "dead"}})
	if err != nil || res.RequeueAfter != requeueInterval {
		t.Errorf("got %v, %v; want a requeue after %s", res, err, requeueInterval)
	}
}

// Models node_pod_cleaner_controller.go nodeNotReadyPredicate and isNodeReady: a node created not Ready, or turning
// from Ready to not Ready (False, Unknown, no condition); not a node staying not Ready, recovering, or deleted.
func TestNodePodCleanerActsOnTurningNotReady(t *testing.T) {
	p := nodeNotReadyPredicate()
	ready, down, unknown := testNode("n", corev1.ConditionTrue), testNode("n", corev1.ConditionFalse),
		testNode("n", corev1.ConditionUnknown)
	bare := testNode("n", "")
	checks := []struct {
		name      string
		got, want bool
	}{
		{"created not ready", p.Create(event.CreateEvent{Object: down}), true},
		{"created ready", p.Create(event.CreateEvent{Object: ready}), false},
		{"ready -> unknown", p.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: unknown}), true},
		{"ready -> no condition", p.Update(event.UpdateEvent{ObjectOld: ready, ObjectNew: bare}), true},
		{"not ready -> not ready", p.Update(event.UpdateEvent{ObjectOld: down, ObjectNew: unknown}), false},
		{"not ready -> ready", p.Update(event.UpdateEvent{ObjectOld: down, ObjectNew: ready}), false},
		{"deleted", p.Delete(event.DeleteEvent{Object: down}), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// Models the two together: a gang instance's pod force-deleted on a dead node is a pod deletion for
// rescheduling.go handlePodDelete, so the whole instance is rebuilt, not just the pod.
func TestForceDeletedGangPodRebuildsItsInstance(t *testing.T) {
	counts := map[string]int{}
	ist := testInstanceSet("decode", true, testRole(1, 2))
	c := testClient(t, deleteCounter(counts), ist, testNode("dead", corev1.ConditionFalse))
	r := testReconciler(c)
	reconcileOnce(t, r, ist)
	pod := podOn(testPod("decode", 0, 0), "dead")
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	cleaner := &nodePodCleaner{client: c, pods: c}
	if _, err := cleaner.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: "dead"}}); err != nil {
		t.Fatal(err)
	}
	r.rescheduler.onPodDelete(pod) // the pod informer's delete event
	reconcileOnce(t, r, ist)
	if counts["Pod"] != 1 || counts["StatefulSet"] != 1 {
		t.Errorf("pods deleted %d, StatefulSets deleted %d; want 1 and 1", counts["Pod"], counts["StatefulSet"])
	}
}
