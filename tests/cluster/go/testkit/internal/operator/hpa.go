package operator

import (
	"context"
	"encoding/json"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hpaName is the HPA of an HPA-scaled InstanceSet (scaling_manager.go).
func hpaName(ist *unstructured.Unstructured) string { return ist.GetName() + "-scaler" }

// reconcileHPA keeps the HPA "<InstanceSet>-scaler" of a role with scalingPolicy.type HPA (C4): its spec is the
// policy's spec with scaleTargetRef the InstanceSet (through its scale subresource). The HPA then owns the
// InstanceSet's spec.replicas; the InferService controller keeps them on updates. The cluster runs no HPA
// controller, so nothing scales by itself. It returns the status the InstanceSet reports for it; an InstanceSet
// without the policy loses its HPA. Without autoscaling/v2 (before Kubernetes 1.23) there is no HPA path at all.
func (r *instanceSetReconciler) reconcileHPA(ctx context.Context, ist *unstructured.Unstructured, role *roleSpec,
	service, roleName string) (*scalingStatus, error) {
	if !r.hpaServed {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: ist.GetNamespace(), Name: hpaName(ist)}
	existing := &autoscalingv2.HorizontalPodAutoscaler{}
	err := r.client.Get(ctx, key, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	found := err == nil
	if !role.hpa() {
		if found && metav1.IsControlledBy(existing, ist) {
			if err := r.client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	status := &scalingStatus{Type: "HPA", Name: key.Name}
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{}
	if len(role.ScalingPolicy.Spec) > 0 {
		if err := json.Unmarshal(role.ScalingPolicy.Spec, &spec); err != nil {
			status.Message = fmt.Sprintf("scalingPolicy.spec is not an HPA spec: %v", err)
			return status, nil
		}
	}
	spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{
		APIVersion: InstanceSetGVK.GroupVersion().String(), Kind: InstanceSetGVK.Kind, Name: ist.GetName(),
	}
	if spec.MaxReplicas == 0 {
		spec.MaxReplicas = max(ptr.Deref(role.Replicas, 1), 1)
	}
	previous := currentStatus(ist).ScalingResourceStatus
	if !found {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{
				Name:            key.Name,
				Namespace:       key.Namespace,
				Labels:          indexLabels(ist.GetLabels(), service, roleName, ""),
				OwnerReferences: []metav1.OwnerReference{controllerRef(ist, InstanceSetGVK)},
			},
			Spec: spec,
		}
		if err := r.client.Create(ctx, hpa, client.FieldOwner(Component)); err != nil && !apierrors.IsAlreadyExists(err) {
			klog.Errorf("create HPA %s: %v", key, err)
			status.Message = fmt.Sprintf("HPA create failed: %v", err)
			return status, nil
		}
		status.Ready, status.Message = true, "HPA created successfully"
		return status, nil
	}
	status.Ready = true
	if previous != nil && previous.Message != "" && previous.Ready {
		status.Message = previous.Message
	} else {
		status.Message = "HPA created successfully"
	}
	// Only the fields the policy sets count: the API server fills in defaults (behavior) of its own.
	if !equality.Semantic.DeepDerivative(spec, existing.Spec) {
		updated := existing.DeepCopy()
		updated.Spec = spec
		if err := r.client.Update(ctx, updated, client.FieldOwner(Component)); err != nil {
			return nil, err
		}
		status.Message = "HPA updated successfully"
	}
	return status, nil
}

// jsonInto decodes raw into out; an empty raw is an error (a role without spec).
func jsonInto(raw json.RawMessage, out any) error {
	if len(raw) == 0 {
		return fmt.Errorf("raw extension is empty")
	}
	return json.Unmarshal(raw, out)
}
