package main

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

const testNS = "mindie-motor"

// kinds: the resources of the tests and their kinds.
var kinds = map[schema.GroupVersionResource]string{
	{Group: inferOperatorGroup, Version: "v1", Resource: "inferservicesets"}:           "InferServiceSet",
	{Group: inferOperatorGroup, Version: "v1", Resource: "inferservices"}:              "InferService",
	{Group: inferOperatorGroup, Version: "v1", Resource: "instancesets"}:               "InstanceSet",
	{Group: "apps", Version: "v1", Resource: "statefulsets"}:                           "StatefulSet",
	{Version: "v1", Resource: "pods"}:                                                  "Pod",
	{Group: "orchestration.aibrix.ai", Version: "v1alpha1", Resource: "stormservices"}: "StormService",
}

func object(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kinds[gvr]))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// fakeCluster is a fake dynamic client holding one object of every kind in testNS and in "other", whose DELETE
// collection deletes the objects of the namespace (the fake has no reaction of its own for it). Before each one it
// calls hook(resource, infer-operator objects left in the namespace); a func hook returns runs after the deletion.
func fakeCluster(t *testing.T, hook func(gvr schema.GroupVersionResource, inferOperatorLeft int) func()) (
	*dynamicfake.FakeDynamicClient, []schema.GroupVersionResource) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	var resources []schema.GroupVersionResource
	var objs []runtime.Object
	for gvr, kind := range kinds {
		listKinds[gvr] = kind + "List"
		resources = append(resources, gvr)
		objs = append(objs, object(gvr, testNS, "x"), object(gvr, "other", "x"))
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	tracker := dyn.Tracker()
	names := func(gvr schema.GroupVersionResource, ns string) []string {
		l, err := tracker.List(gvr, gvr.GroupVersion().WithKind(kinds[gvr]), ns)
		if err != nil {
			t.Errorf("list %s: %v", gvr, err)
			return nil
		}
		var out []string
		for _, o := range l.(*unstructured.UnstructuredList).Items {
			out = append(out, o.GetName())
		}
		return out
	}
	var mu sync.Mutex // empty deletes the collections in parallel
	dyn.PrependReactor("delete-collection", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		gvr, ns := action.GetResource(), action.GetNamespace()
		mu.Lock()
		defer mu.Unlock()
		left := 0
		for r := range kinds {
			if r.Group == inferOperatorGroup {
				left += len(names(r, ns))
			}
		}
		after := hook(gvr, left)
		for _, name := range names(gvr, ns) {
			if err := tracker.Delete(gvr, ns, name); err != nil {
				return true, nil, err
			}
		}
		if after != nil {
			after()
		}
		return true, nil, nil
	})
	return dyn, resources
}

// slow delays the DELETE collections of the infer-operator kinds, so that a reset deleting other kinds meanwhile
// is caught.
type slow struct{ dynamic.Interface }

type slowResource struct {
	dynamic.NamespaceableResourceInterface
}

type slowNamespace struct{ dynamic.ResourceInterface }

func (s slow) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	if gvr.Group != inferOperatorGroup {
		return s.Interface.Resource(gvr)
	}
	return slowResource{s.Interface.Resource(gvr)}
}

func (r slowResource) Namespace(ns string) dynamic.ResourceInterface {
	return slowNamespace{r.NamespaceableResourceInterface.Namespace(ns)}
}

func (n slowNamespace) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions,
	listOpts metav1.ListOptions) error {
	time.Sleep(20 * time.Millisecond)
	return n.ResourceInterface.DeleteCollection(ctx, opts, listOpts)
}

// The infer-operator's objects (InferServiceSets, InferServices, InstanceSets) are deleted, and gone, before any
// other collection of the namespace is deleted; then the namespace is emptied as before, and other namespaces are
// left alone.
func TestResetDeletesTheInferOperatorObjectsFirst(t *testing.T) {
	var order []string
	dyn, resources := fakeCluster(t, func(gvr schema.GroupVersionResource, left int) func() {
		order = append(order, gvr.Resource)
		if gvr.Group != inferOperatorGroup && left > 0 {
			t.Errorf("%s deleted while %d infer-operator objects are left", gvr.Resource, left)
		}
		return nil
	})
	if err := reset(context.Background(), slow{dyn}, resources, testNS); err != nil {
		t.Fatal(err)
	}
	if len(order) < 3 || !slices.Equal(slices.Sorted(slices.Values(order[:3])),
		[]string{"inferservices", "inferservicesets", "instancesets"}) {
		t.Errorf("DELETE collections %v; want the three infer-operator kinds first", order)
	}
	for gvr := range kinds {
		for _, ns := range []string{testNS, "other"} {
			l, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{testNS: 0, "other": 1}[ns]; len(l.Items) != want {
				t.Errorf("%s in %s: %d left, want %d", gvr.Resource, ns, len(l.Items), want)
			}
		}
	}
}

// A controller that makes an InstanceSet again right after its DELETE collection (the operator's InferService
// reconcile, before its InferService is gone) does not let the rest start: the infer-operator kinds are deleted
// until the API server lists none.
func TestResetWaitsUntilTheInferOperatorObjectsAreGone(t *testing.T) {
	instanceSets := schema.GroupVersionResource{Group: inferOperatorGroup, Version: "v1", Resource: "instancesets"}
	var dyn *dynamicfake.FakeDynamicClient
	deletes, others := 0, 0
	dyn, resources := fakeCluster(t, func(gvr schema.GroupVersionResource, left int) func() {
		if gvr.Group != inferOperatorGroup {
			others++
			if left > 0 {
				t.Errorf("%s deleted while %d infer-operator objects are left", gvr.Resource, left)
			}
			return nil
		}
		if gvr != instanceSets {
			return nil
		}
		deletes++
		if deletes > 1 {
			return nil
		}
		return func() {
			if err := dyn.Tracker().Create(gvr, object(gvr, testNS, "again"), testNS); err != nil {
				t.Error(err)
			}
		}
	})
	if err := reset(context.Background(), dyn, resources, testNS); err != nil {
		t.Fatal(err)
	}
	if deletes < 2 || others == 0 {
		t.Errorf("%d DELETE collections of InstanceSets, %d of other kinds; want 2 or more (the one made again "+
			"deleted too), then the others", deletes, others)
	}
}
