// Command mindie-test-reset gives an end-to-end test a clean cluster in about a second: it empties the test
// namespaces by one DELETE collection per resource (deletecollection, as the namespace controller does, but
// without its requeue delays), deletes every other namespace and ClusterRole/ClusterRoleBinding the tests made,
// and waits until they are gone.
//
// In each test namespace the infer-operator's own objects go first: its InferServiceSets, InferServices and
// InstanceSets (mindcluster.huawei.com) are deleted, and deleted again, until the API server lists none; only then
// is every collection deleted as before. Deleted all at once, the pods of a gang-scheduled InstanceSet could finish
// their deletion while the InstanceSet still existed, and the fake operator, like the real one's rescheduler, would
// record each as a fault of the pod's workload; the records live in the operator's memory and outlive the
// namespace, so the next test's gang StatefulSet of the same name would be deleted and made again. Once the
// InstanceSet is gone, the rescheduler's gang check (a Get of the InstanceSet; Ascend/mind-cluster
// component/infer-operator/pkg/controller/rescheduling/rescheduling.go, handlePodDelete and isGangScheduled) fails
// and a pod deletion records nothing (only a pod whose deletion ends within the first step still can be). This
// costs one more round trip per namespace: the three kinds have no finalizers, so they are gone when their DELETE
// collection returns.
//
// Usage:
//
//	mindie-test-reset --kubeconfig FILE --namespace NS... [--keep NS...] [--cluster-prefix PREFIX]
//
// --namespace: a namespace the test uses: emptied when it exists (its ConfigMap kube-root-ca.crt and
// ServiceAccount default stay: without the latter no pod is admitted), created otherwise. --keep: a namespace that
// stays as it is (default, kube-system, ...). Every other namespace is deleted. --cluster-prefix: ClusterRoles and
// ClusterRoleBindings whose names start with it are deleted. Exits 0 once done, 1 with one line on failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// kept is what Kubernetes itself makes in every namespace.
var kept = map[string]string{"configmaps": "metadata.name!=kube-root-ca.crt", "serviceaccounts": "metadata.name!=default"}

func main() {
	var kubeconfig, prefix string
	var namespaces, keep list
	flag.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster admin")
	flag.Var(&namespaces, "namespace", "a test namespace: emptied or created (repeatable)")
	flag.Var(&keep, "keep", "a namespace left alone (repeatable)")
	flag.StringVar(&prefix, "cluster-prefix", "", "delete ClusterRoles and ClusterRoleBindings with this name prefix")
	flag.Parse()
	if kubeconfig == "" || len(namespaces) == 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mindie-test-reset --kubeconfig FILE --namespace NS... [--keep NS...] [--cluster-prefix P]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, kubeconfig, namespaces, keep, prefix); err != nil {
		fmt.Fprintf(os.Stderr, "mindie-test-reset: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, namespaces, keep []string, prefix string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000         // a test instrument on a local cluster: no client-side throttling
	cfg.WarningHandler = rest.NoWarnings{} // "v1 Endpoints is deprecated": not the test's business
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	resources, err := collections(discovery.NewDiscoveryClientForConfigOrDie(cfg))
	if err != nil {
		return err
	}

	wanted := map[string]bool{}
	for _, ns := range namespaces {
		wanted[ns] = true
	}
	for _, ns := range keep {
		wanted[ns] = false
	}
	all, err := core.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	var gone []string
	for _, ns := range all.Items {
		want, named := wanted[ns.Name]
		switch {
		case named && !want: // kept
		case want && ns.Status.Phase == corev1.NamespaceActive:
			exists[ns.Name] = true
		default:
			gone = append(gone, ns.Name)
			if ns.DeletionTimestamp == nil {
				if err := core.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
	}
	if prefix != "" {
		if err := deleteClusterRBAC(ctx, core, prefix); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(namespaces))
	for _, ns := range namespaces {
		if !exists[ns] {
			continue
		}
		wg.Add(1)
		go func(ns string) {
			defer wg.Done()
			if err := reset(ctx, dyn, resources, ns); err != nil {
				errs <- err
			}
		}(ns)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	for _, ns := range gone {
		if err := waitGone(ctx, core, ns); err != nil {
			return err
		}
	}
	for _, ns := range namespaces {
		if exists[ns] {
			continue
		}
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if _, err := core.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// collections returns the namespaced resources that can be listed and deleted as a collection.
func collections(d discovery.DiscoveryInterface) ([]schema.GroupVersionResource, error) {
	lists, err := d.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !has(r.Verbs, "deletecollection") || !has(r.Verbs, "list") {
				continue
			}
			if gv.Group == "events.k8s.io" { // the same objects as core/v1 events
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}

func has(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// inferOperatorGroup and inferOperatorKinds: the infer-operator's objects, which reset deletes before the rest.
const inferOperatorGroup = "mindcluster.huawei.com"

var inferOperatorKinds = map[string]bool{"inferservicesets": true, "inferservices": true, "instancesets": true}

// reset empties namespace ns: first the infer-operator's objects among resources, until none is left (so that no
// pod of theirs finishes its deletion while its InstanceSet still exists), then every collection.
func reset(ctx context.Context, dyn dynamic.Interface, resources []schema.GroupVersionResource, ns string) error {
	var first []schema.GroupVersionResource
	for _, gvr := range resources {
		if gvr.Group == inferOperatorGroup && inferOperatorKinds[gvr.Resource] {
			first = append(first, gvr)
		}
	}
	if len(first) > 0 { // none without the CRDs
		if err := empty(ctx, dyn, first, ns); err != nil {
			return err
		}
	}
	return empty(ctx, dyn, resources, ns)
}

// empty deletes every collection of ns until nothing is left: controllers may make objects again for a moment (a
// StatefulSet's pod, the operator's workload of an InstanceSet being deleted) before their owners are gone.
func empty(ctx context.Context, dyn dynamic.Interface, resources []schema.GroupVersionResource, ns string) error {
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	// A bound in time, not in attempts: on a loaded machine (two cores shared with a build) the garbage collector
	// and KWOK take longer than 200 quick looks to finish a namespace's deletions.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var mu sync.Mutex
		left := 0
		var firstErr error
		var wg sync.WaitGroup
		for _, gvr := range resources {
			wg.Add(1)
			go func(gvr schema.GroupVersionResource) {
				defer wg.Done()
				selector := kept[gvr.Resource]
				if gvr.Group != "" {
					selector = ""
				}
				c := dyn.Resource(gvr).Namespace(ns)
				err := c.DeleteCollection(ctx,
					metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background},
					metav1.ListOptions{FieldSelector: selector})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
					mu.Lock()
					firstErr = fmt.Errorf("delete %s in %s: %w", gvr.String(), ns, err)
					mu.Unlock()
					return
				}
				l, err := c.List(ctx, metav1.ListOptions{FieldSelector: selector})
				if err != nil {
					return // a resource gone meanwhile (a CRD deleted)
				}
				mu.Lock()
				left += len(l.Items)
				mu.Unlock()
			}(gvr)
		}
		wg.Wait()
		if firstErr != nil {
			return firstErr
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s does not stay empty (%d objects left after 90s)", ns, left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // the garbage collector and KWOK finishing deletions
		}
	}
}

func deleteClusterRBAC(ctx context.Context, core kubernetes.Interface, prefix string) error {
	roles, err := core.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, r := range roles.Items {
		if strings.HasPrefix(r.Name, prefix) {
			if err := core.RbacV1().ClusterRoles().Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	bindings, err := core.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range bindings.Items {
		if strings.HasPrefix(b.Name, prefix) {
			if err := core.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// waitGone waits until namespace ns no longer exists, by watching it.
func waitGone(ctx context.Context, core kubernetes.Interface, ns string) error {
	for {
		list, err := core.CoreV1().Namespaces().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ns})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		w, err := core.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{
			FieldSelector: "metadata.name=" + ns, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if ev.Type == "DELETED" {
				w.Stop()
				return nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("namespace %s still exists: %w", ns, ctx.Err())
		}
	}
}
