// Package operator is the test stand-in for MindCluster infer-operator (mindcluster.huawei.com/v1): the InferServiceSet
// → InferService → InstanceSet → workload chain, modelled on the real operator's source (Ascend/mind-cluster
// component/infer-operator/: main.go and pkg/controller/...; comments name the file and function each part models).
// Pods are not its business: it creates one StatefulSet or Deployment per instance and the cluster's own controllers,
// scheduler and (KWOK) kubelets do the rest.
package operator

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// The operator's label and annotation keys (common/constants of the real operator, as the rules doc names them).
const (
	LabelInferServiceSet   = "infer.huawei.com/inferserviceset-name"
	LabelInferServiceIndex = "infer.huawei.com/inferservice-index"
	LabelInferService      = "infer.huawei.com/inferservice-name"
	LabelInstanceSet       = "infer.huawei.com/instanceset-name"
	LabelInstanceIndex     = "infer.huawei.com/instanceset-index"
	LabelOperator          = "infer.huawei.com/ascend-infer-operator"
	LabelPriorityStrategy  = "infer.huawei.com/priority-scheduling-strategy"
	LabelGangSchedule      = "infer.huawei.com/gang-schedule"
	// LabelInferServiceID is unprefixed, as Volcano's side reads it.
	LabelInferServiceID  = "inferserviceid"
	LabelFaultScheduling = "fault-scheduling"

	AnnotationSchedulePolicy = "huawei.com/schedule_policy"
	AnnotationGroupName      = "scheduling.k8s.io/group-name"

	// The rescheduler's keys (common/constant.go): MindCluster's fault handling writes a pod's health into
	// AnnotationPodStatus ("Unhealthy..."; a business fault ends in businessFaultSuffix and counts against the
	// pod's LabelFaultRetryTimes); the rescheduler marks a workload to rebuild with AnnotationDeletingTrigger.
	AnnotationPodStatus       = "huawei.com/pod-status"
	AnnotationDeletingTrigger = "infer.huawei.com/deleting-trigger"
	LabelFaultRetryTimes      = "fault-retry-times"
	unhealthyStatusPrefix     = "Unhealthy"
	businessFaultSuffix       = "pod-failed"

	// LabelScalingOwnedBy names, on an HPA, the InstanceSet it scales (scaling/scaling_manager.go).
	LabelScalingOwnedBy = "infer.huawei.com/scaling-owned-by"

	// superPodPolicySuffix marks a schedule policy whose InstanceSets get the inferserviceid label
	// (inferservice_controller.go isTargetSuperPodJob).
	superPodPolicySuffix = "-sp"

	StrategyParallel = "Parallel"
	StrategyPriority = "Priority"

	// Limits of the real reconcilers (inferservice_controller.go, inferserviceset_controller.go).
	maxInferServices = 64
	maxRoles         = 32

	headlessPort     = 8080
	headlessPortName = "infer"

	// Component is the field manager of every write.
	Component = "infer-operator"
	// InstanceSetControllerName is the InstanceSet controller's name and the source component of its events (the
	// real recorder is mgr.GetEventRecorderFor(common.InstanceSetControllerName)).
	InstanceSetControllerName = "instanceset-controller"
)

// The kinds this package reconciles or creates, all read as unstructured objects.
var (
	GroupVersion       = schema.GroupVersion{Group: "mindcluster.huawei.com", Version: "v1"}
	InferServiceSetGVK = GroupVersion.WithKind("InferServiceSet")
	InferServiceGVK    = GroupVersion.WithKind("InferService")
	InstanceSetGVK     = GroupVersion.WithKind("InstanceSet")
	PodGroupGVK        = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}
)

// New returns an empty unstructured object of kind gvk.
func New(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// NewList returns an empty unstructured list of kind gvk.
func NewList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

// controllerRef is the ownerReference infer-operator puts on every child: controller, blocking the owner's
// foreground deletion until the child is gone.
func controllerRef(owner metav1.Object, gvk schema.GroupVersionKind) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// decodeField decodes the field at path of u into out (by JSON); false when the field is absent.
func decodeField(u *unstructured.Unstructured, out any, path ...string) (bool, error) {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !found || v == nil {
		return false, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return true, err
	}
	return true, json.Unmarshal(raw, out)
}

// toUnstructuredValue turns a typed value into the map/slice form unstructured objects hold.
func toUnstructuredValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return normalize(out), nil
}

// normalize makes JSON numbers int64 where they are integral, as the API machinery's unstructured decoder does,
// so that values built here compare equal with those read from the cache.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	default:
		return v
	}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// indexLabels are the indexer labels of the real operator: InferService, role, instance index ("" for objects of
// the whole InstanceSet) and the operator's own label.
func indexLabels(base map[string]string, service, role, index string) map[string]string {
	out := copyMap(base)
	out[LabelInferService] = service
	out[LabelInstanceSet] = role
	out[LabelInstanceIndex] = index
	out[LabelOperator] = "true"
	return out
}

// serviceIndex is the InferService index: the last "-" segment of its name.
func serviceIndex(inferService string) (int, error) {
	i := strings.LastIndex(inferService, "-")
	if i < 0 {
		return 0, fmt.Errorf("service name %s format error, should be <service-name>-<index>", inferService)
	}
	return strconv.Atoi(inferService[i+1:])
}

// splitServiceName returns the set name and the index text of an InferService name ("X-3" → "X", "3").
func splitServiceName(inferService string) (string, string) {
	i := strings.LastIndex(inferService, "-")
	if i < 0 {
		return inferService, "0"
	}
	return inferService[:i], inferService[i+1:]
}

// deepEqualJSON compares two unstructured values.
func deepEqualJSON(a, b any) bool {
	ra, err1 := json.Marshal(a)
	rb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ra) == string(rb)
}

// copyValue deep-copies an unstructured value (maps, slices, scalars).
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	default:
		return v
	}
}

// addServiceMetadata gives each role.services entry of a role an empty "metadata" when it has none: the real
// controllers write roles back through their typed structs, in which the entry's metadata is a struct and always
// encoded, so role Services round-trip as `metadata: {}` in InferService and InstanceSet specs
// (Ascend/mind-cluster component/infer-operator/pkg/api/v1/instanceset_types.go, ServiceSpec: its ServiceMeta is a
// struct, which `json:"metadata,omitempty"` does not omit; cosmetic).
func addServiceMetadata(role map[string]any) {
	services, _ := role["services"].([]any)
	for _, s := range services {
		if entry, ok := s.(map[string]any); ok {
			if _, has := entry["metadata"]; !has {
				entry["metadata"] = map[string]any{}
			}
		}
	}
}

// addRolesServiceMetadata applies addServiceMetadata to every role of an InferService spec.
func addRolesServiceMetadata(spec any) {
	m, _ := spec.(map[string]any)
	roles, _ := m["roles"].([]any)
	for _, r := range roles {
		if role, ok := r.(map[string]any); ok {
			addServiceMetadata(role)
		}
	}
}
