package operator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// podNodeNameField is the pod field index the cleaner lists by (the real one registers the same index).
const podNodeNameField = "spec.nodeName"

// nodePodCleaner force-deletes (grace period 0, background propagation) every operator pod on a node that turned
// NotReady, so that pods do not stay Terminating on a dead node and their workloads' controllers make them again
// elsewhere (models Ascend/mind-cluster component/infer-operator/pkg/controller/nodepodcleaner/
// node_pod_cleaner_controller.go, NodePodCleanerReconciler). The rendered tolerationSeconds never come into play.
// A gang instance's force-deleted pod is a pod deletion like any other for the rescheduler, which then rebuilds the
// whole instance.
type nodePodCleaner struct {
	client client.Client
	// pods is the operator's pod cache (label-selected), indexed by spec.nodeName.
	pods client.Reader
}

// Reconcile acts on a node that is not Ready (models node_pod_cleaner_controller.go Reconcile): a failed delete is
// retried after requeueInterval (1 s, DefaultReEnqueueInterval), not through the rate limiter.
func (r *nodePodCleaner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := r.client.Get(ctx, req.NamespacedName, node); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nodeReady(node) {
		return reconcile.Result{}, nil
	}
	klog.Infof("node %s is NotReady: force-deleting the infer-operator pods on it", node.Name)
	if err := r.forceDeletePods(ctx, node.Name); err != nil {
		klog.Errorf("force-delete pods on node %s failed: %v", node.Name, err)
		return reconcile.Result{RequeueAfter: requeueInterval}, nil
	}
	return reconcile.Result{}, nil
}

// forceDeletePods deletes every pod labelled ascend-infer-operator=true on the node, with grace period 0; pods
// already gone are skipped, other failures counted (models node_pod_cleaner_controller.go forceDeletePodsOnNode).
func (r *nodePodCleaner) forceDeletePods(ctx context.Context, nodeName string) error {
	pods := &corev1.PodList{}
	if err := r.pods.List(ctx, pods, client.MatchingLabels{LabelOperator: "true"},
		client.MatchingFields{podNodeNameField: nodeName}); err != nil {
		return fmt.Errorf("list pods on node %s failed: %w", nodeName, err)
	}
	failed := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		err := r.client.Delete(ctx, pod, client.GracePeriodSeconds(0),
			client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case err == nil:
			klog.Infof("force-deleted pod %s/%s on node %s", pod.Namespace, pod.Name, nodeName)
		case apierrors.IsNotFound(err):
		default:
			klog.Errorf("force-delete pod %s/%s on node %s failed: %v", pod.Namespace, pod.Name, nodeName, err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d pods failed to force-delete on node %s", failed, nodeName)
	}
	return nil
}

// podNodeName indexes pods by the node they are bound to (none for unscheduled pods).
func podNodeName(obj client.Object) []string {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil
	}
	return []string{pod.Spec.NodeName}
}

// nodeReady: condition Ready with status True; Unknown, False or no condition are not ready (models
// node_pod_cleaner_controller.go isNodeReady).
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeNotReadyPredicate passes a node created not Ready and a node turning from Ready to not Ready; nothing else
// (models node_pod_cleaner_controller.go nodeNotReadyPredicate).
func nodeNotReadyPredicate() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			node, ok := e.Object.(*corev1.Node)
			return ok && !nodeReady(node)
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*corev1.Node)
			after, ok2 := e.ObjectNew.(*corev1.Node)
			return ok1 && ok2 && nodeReady(before) && !nodeReady(after)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
