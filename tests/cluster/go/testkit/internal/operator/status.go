package operator

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// currentStatus decodes u's status (zero when absent or unreadable: it is rewritten whole).
func currentStatus(u *unstructured.Unstructured) setStatus {
	var st setStatus
	if _, err := decodeField(u, &st, "status"); err != nil {
		return setStatus{}
	}
	return st
}

// nextStatus starts a new status from the current one: the conditions are kept, so that a Ready condition keeps
// its lastTransitionTime until its status flips (meta.SetStatusCondition), and the rest is recomputed.
func nextStatus(u *unstructured.Unstructured) setStatus {
	return setStatus{Conditions: slices.Clone(currentStatus(u).Conditions)}
}

// setReady sets the Ready condition.
func (st *setStatus) setReady(ready bool, reason, message string) {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type:    "Ready",
		Status:  status,
		Reason:  reason,
		Message: message,
	})
}

// writeStatus stores st as u's status through the status subresource, unless u already holds it. A conflict is
// returned as it is (the caller requeues).
func writeStatus(ctx context.Context, c client.Client, u *unstructured.Unstructured, st setStatus) error {
	if equality.Semantic.DeepEqual(currentStatus(u), st) {
		return nil
	}
	v, err := toUnstructuredValue(st)
	if err != nil {
		return fmt.Errorf("encode status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	updated := u.DeepCopy()
	updated.Object["status"] = v
	return c.Status().Update(ctx, updated, client.FieldOwner(Component))
}

// readyCondition reports whether u has condition Ready with status True.
func readyCondition(u *unstructured.Unstructured) bool {
	return meta.IsStatusConditionTrue(currentStatus(u).Conditions, "Ready")
}
