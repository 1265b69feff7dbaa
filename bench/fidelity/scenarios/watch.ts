/** Watches: event sequences of short watches (timeoutSeconds), bookmarks, sendInitialEvents, too old and too new. */
import { area, cms, compact, configMap, del, get, patch, post, put, watch, widget, widgets } from "../scenario.js"

const history = [
  post(cms, configMap("a", { k: "1" })),
  put(`${cms}/a`, configMap("a", { k: "2" })),
  post(cms, configMap("b")),
  del(`${cms}/a`)
]

export const watches = area("watch", [
  { name: "watch from a resourceVersion replays", steps: [...history, watch(`${cms}?resourceVersion={rv:0}`, 1)] },
  {
    name: "watch from the latest resourceVersion is quiet",
    steps: [...history, watch(`${cms}?resourceVersion={rv:2}`, 1)]
  },
  {
    name: "watch without resourceVersion starts with ADDED",
    steps: [
      post(cms, configMap("a", undefined, { labels: { w: "1" } })),
      post(cms, configMap("b", undefined, { labels: { w: "1" } })),
      watch(`${cms}?labelSelector=w`, 1)
    ]
  },
  {
    name: "watch from resourceVersion 0",
    steps: [post(widgets, widget("w1")), post(widgets, widget("w2")), watch(`${widgets}?resourceVersion=0`, 1)]
  },
  {
    name: "watch while writing",
    steps: [
      post(widgets, widget("w0")),
      watch(`${widgets}?resourceVersion={rv:0}`, 3, { background: true }),
      post(widgets, widget("w1")),
      patch("merge", `${widgets}/w1`, { spec: { replicas: 2 } }),
      patch("merge", `${widgets}/w1/status`, { status: { phase: "Ready" } }),
      del(`${widgets}/w1`)
    ]
  },
  {
    name: "watch of one object by field selector",
    steps: [
      post(cms, configMap("a")),
      post(cms, configMap("b")),
      put(`${cms}/b`, configMap("b", { k: "v" })),
      put(`${cms}/a`, configMap("a", { k: "v" })),
      watch(`${cms}?fieldSelector=metadata.name%3Da&resourceVersion={rv:0}`, 1)
    ]
  },
  {
    name: "watch with a label selector sees objects leave and enter",
    steps: [
      post(cms, configMap("a", undefined, { labels: { sel: "yes" } })),
      patch("merge", `${cms}/a`, { metadata: { labels: { sel: "no" } } }),
      patch("merge", `${cms}/a`, { metadata: { labels: { sel: "yes" } } }),
      watch(`${cms}?labelSelector=sel%3Dyes&resourceVersion={rv:0}`, 1)
    ]
  },
  {
    name: "watch of a finalized delete",
    steps: [
      post(cms, configMap("a", undefined, { finalizers: ["example.com/hold"] })),
      del(`${cms}/a`),
      patch("merge", `${cms}/a`, { metadata: { finalizers: null } }),
      watch(`${cms}?resourceVersion={rv:0}`, 1)
    ]
  },
  {
    name: "watch by the legacy watch path",
    steps: [...history, watch(`/api/v1/watch/namespaces/{ns}/configmaps?resourceVersion={rv:0}`, 1)]
  },
  {
    name: "watch of a named object path",
    steps: [...history, watch(`/api/v1/watch/namespaces/{ns}/configmaps/b?resourceVersion={rv:0}`, 1)]
  },
  {
    name: "watch with bookmarks",
    steps: [post(cms, configMap("a")), watch(`${cms}?resourceVersion={rv:0}&allowWatchBookmarks=true`, 4)]
  },
  {
    name: "sendInitialEvents",
    steps: [
      post(widgets, widget("w1")),
      post(widgets, widget("w2")),
      watch(`${widgets}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, 1)
    ]
  },
  {
    name: "sendInitialEvents without bookmarks",
    steps: [watch(`${widgets}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, 1)]
  },
  {
    name: "sendInitialEvents without resourceVersionMatch",
    steps: [watch(`${widgets}?sendInitialEvents=true&allowWatchBookmarks=true`, 1)]
  },
  {
    name: "watch with resourceVersionMatch",
    steps: [watch(`${widgets}?resourceVersion=0&resourceVersionMatch=NotOlderThan`, 1)]
  },
  { name: "watch from a resourceVersion too new is silent", steps: [watch(`${widgets}?resourceVersion=999999999`, 1)] },
  {
    name: "watch-list from a resourceVersion too new",
    steps: [
      watch(
        `${widgets}?resourceVersion=999999999&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
        5
      )
    ]
  },
  { name: "watch with a bad timeoutSeconds", steps: [get(`${widgets}?watch=true&timeoutSeconds=soon`)] },
  {
    name: "watch from a compacted resourceVersion is Gone",
    serial: true,
    steps: [...history, compact, watch(`${cms}?resourceVersion={rv:0}`, 1)]
  },
  {
    name: "watch namespaces by name",
    steps: [
      post(cms, configMap("a")),
      watch("/api/v1/namespaces?fieldSelector=metadata.name%3D{ns}", 1)
    ]
  }
])
