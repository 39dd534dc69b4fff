package operator

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// roleSpec is what this operator reads of a role (InferService spec.roles[i], InstanceSet spec). Writes copy the
// unstructured role as it is, so fields this type does not know survive.
type roleSpec struct {
	Name          string         `json:"name"`
	Replicas      *int32         `json:"replicas,omitempty"`
	Priority      *int32         `json:"priority,omitempty"`
	Workload      workloadType   `json:"workload"`
	Metadata      roleMeta       `json:"metadata"`
	Services      []roleService  `json:"services,omitempty"`
	ScalingPolicy *scalingPolicy `json:"scalingPolicy,omitempty"`
	// Spec is the workload spec (a StatefulSetSpec or DeploymentSpec), decoded per kind.
	Spec json.RawMessage `json:"spec,omitempty"`
}

type workloadType struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

type roleMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type roleService struct {
	Name string             `json:"name"`
	Spec corev1.ServiceSpec `json:"spec"`
}

type scalingPolicy struct {
	Type string          `json:"type"`
	Spec json.RawMessage `json:"spec,omitempty"`
}

func (r *roleSpec) hpa() bool { return r.ScalingPolicy != nil && r.ScalingPolicy.Type == "HPA" }

// inferServiceSpec is what this operator reads of an InferService spec (= the InferServiceSet's spec.template).
type inferServiceSpec struct {
	Roles              []roleSpec          `json:"roles"`
	SchedulingStrategy *schedulingStrategy `json:"schedulingStrategy,omitempty"`
}

type schedulingStrategy struct {
	Type string `json:"type"`
}

// setStatus is the status of all three mindcluster kinds (zero values omitted, as the real types' omitempty).
type setStatus struct {
	Conditions            []metav1.Condition `json:"conditions,omitempty"`
	ObservedGeneration    int64              `json:"observedGeneration,omitempty"`
	Replicas              int32              `json:"replicas,omitempty"`
	ReadyReplicas         int32              `json:"readyReplicas,omitempty"`
	LabelSelector         string             `json:"labelSelector,omitempty"`
	ScalingResourceStatus *scalingStatus     `json:"scalingResourceStatus,omitempty"`
}

type scalingStatus struct {
	Type    string `json:"type,omitempty"`
	Name    string `json:"name,omitempty"`
	Ready   bool   `json:"ready,omitempty"`
	Message string `json:"message,omitempty"`
}
