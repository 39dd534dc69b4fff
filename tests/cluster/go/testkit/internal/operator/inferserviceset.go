package operator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inferServiceSetReconciler keeps InferServices X-0..X-(spec.replicas-1) of InferServiceSet X, each with the set's
// spec.template as its spec (inferserviceset_controller.go).
type inferServiceSetReconciler struct {
	client client.Client
}

func (r *inferServiceSetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	iss := New(InferServiceSetGVK)
	if err := r.client.Get(ctx, req.NamespacedName, iss); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if iss.GetDeletionTimestamp() != nil {
		return ctrl.Result{}, nil
	}
	// spec.replicas: absent means 1; outside 1..64 the real operator only logs (inferserviceset_controller.go) and
	// changes nothing.
	replicas := int64(1)
	if v, found, err := unstructured.NestedFieldNoCopy(iss.Object, "spec", "replicas"); err == nil && found && v != nil {
		n, ok := v.(int64)
		if !ok {
			klog.Errorf("InferServiceSet %s: spec.replicas %v is not an integer", req, v)
			return ctrl.Result{}, nil
		}
		replicas = n
	}
	if replicas < 1 || replicas > maxInferServices {
		klog.Errorf("InferServiceSet %s replicas %d exceeds max %d or less than 1", req, replicas, maxInferServices)
		return ctrl.Result{}, nil
	}
	template, _, _ := unstructured.NestedFieldCopy(iss.Object, "spec", "template")
	if template == nil {
		template = map[string]any{}
	}
	addRolesServiceMetadata(template)

	list := NewList(InferServiceGVK)
	if err := r.client.List(ctx, list, client.InNamespace(iss.GetNamespace()),
		client.MatchingLabels{LabelInferServiceSet: iss.GetName()}); err != nil {
		return ctrl.Result{}, err
	}
	existing := map[int]*unstructured.Unstructured{}
	for i := range list.Items {
		is := &list.Items[i]
		index, err := strconv.Atoi(is.GetLabels()[LabelInferServiceIndex])
		if err != nil || index < 0 || index >= int(replicas) {
			// Scale-in of the set, or an index that is no index: the InferService goes, with what it owns.
			if err := r.client.Delete(ctx, is); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
			klog.Infof("deleted InferService %s/%s", is.GetNamespace(), is.GetName())
			continue
		}
		existing[index] = is
	}
	for i := 0; i < int(replicas); i++ {
		if is, ok := existing[i]; ok {
			current, _, _ := unstructured.NestedFieldNoCopy(is.Object, "spec")
			if deepEqualJSON(current, template) {
				continue
			}
			// The whole spec is replaced; metadata is left as it is.
			updated := is.DeepCopy()
			updated.Object["spec"] = copyValue(template)
			if err := r.client.Update(ctx, updated, client.FieldOwner(Component)); err != nil {
				return requeueOnConflict(err)
			}
			klog.Infof("updated InferService %s/%s", is.GetNamespace(), is.GetName())
			continue
		}
		is := New(InferServiceGVK)
		is.SetName(fmt.Sprintf("%s-%d", iss.GetName(), i))
		is.SetNamespace(iss.GetNamespace())
		is.SetLabels(map[string]string{LabelInferServiceSet: iss.GetName(), LabelInferServiceIndex: strconv.Itoa(i)})
		is.SetOwnerReferences([]metav1.OwnerReference{controllerRef(iss, InferServiceSetGVK)})
		is.Object["spec"] = copyValue(template)
		if err := r.client.Create(ctx, is, client.FieldOwner(Component)); err == nil {
			klog.Infof("created InferService %s/%s", is.GetNamespace(), is.GetName())
		} else if !apierrors.IsAlreadyExists(err) {
			klog.Errorf("create InferService %s/%s: %v", is.GetNamespace(), is.GetName(), err)
			return ctrl.Result{}, err
		}
	}

	// Status: replicas = spec.replicas, readyReplicas = InferServices Ready; observedGeneration on every reconcile.
	if err := r.client.List(ctx, list, client.InNamespace(iss.GetNamespace()),
		client.MatchingLabels{LabelInferServiceSet: iss.GetName()}); err != nil {
		return ctrl.Result{}, err
	}
	ready := int32(0)
	for i := range list.Items {
		if readyCondition(&list.Items[i]) {
			ready++
		}
	}
	st := nextStatus(iss)
	st.Replicas = int32(replicas)
	st.ReadyReplicas = ready
	st.ObservedGeneration = iss.GetGeneration()
	if ready >= st.Replicas {
		st.setReady(true, "AllInferServicesReady", "All InferService replicas are ready")
	} else {
		st.setReady(false, "ReplicasNotReady", fmt.Sprintf("%d of %d InferService replicas are ready", ready, st.Replicas))
	}
	return requeueOnConflict(writeStatus(ctx, r.client, iss, st))
}

// conflictRetry is how soon a reconcile whose write met a conflict (it read a stale object from the cache) runs
// again; by then the cache holds the newer object, whose update event would requeue it anyway.
const conflictRetry = 250 * time.Millisecond

// requeueOnConflict turns a conflict into a requeue and passes other errors on (rate-limited retries).
func requeueOnConflict(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
