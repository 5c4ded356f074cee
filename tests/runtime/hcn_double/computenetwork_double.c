/*
 * A test double of computenetwork.dll's namespace API, plus CoTaskMemFree.
 *
 * Written for kubelet-winnet's tests so the real ctypes path (kubelet_winnet.hcn.binding)
 * runs on Linux. It keeps namespaces in memory and exports the same C ABI as the seven
 * Hcn*Namespace* functions in the reference table: HRESULT is int32_t, GUIDs come in by
 * pointer, strings are NUL-terminated wchar_t (32-bit here, 16-bit on Windows), handles
 * are void*. Every out-string is malloc'ed and must be released with this library's
 * CoTaskMemFree; the double counts outstanding strings and open handles, and counts
 * frees/closes of pointers it never handed out, so tests can assert zero leaks and no
 * double frees.
 *
 * It is not a JSON implementation: it validates bracket structure, pulls a few string
 * values out by key, and answers E_NOTIMPL for query features it does not model
 * (Filter, Flags). Build: cc -shared -fPIC -pthread -o libdouble.so computenetwork_double.c
 */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define EXPORT __attribute__((visibility("default")))

typedef int32_t HRESULT;
typedef struct {
    uint32_t Data1;
    uint16_t Data2;
    uint16_t Data3;
    uint8_t Data4[8];
} GUID;

#define HR(x) ((HRESULT)(uint32_t)(x))
#define S_OK 0
#define E_NOTIMPL HR(0x80004001)
#define E_POINTER HR(0x80004003)
#define E_HANDLE HR(0x80070006)
#define E_OUTOFMEMORY HR(0x8007000E)
#define E_INVALIDARG HR(0x80070057)
#define HR_NOT_FOUND HR(0x80070490)
#define HR_ALREADY_EXISTS HR(0x800700B7)
#define HCN_E_ENDPOINT_NOT_FOUND HR(0x803B0002)
#define HCN_E_GUID_CONVERSION_FAILURE HR(0x803B0019)
#define HCN_E_INVALID_JSON HR(0x803B001B)
#define HCN_E_DEFAULT_NAMESPACE_EXISTS HR(0x803B0029)
#define HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS HR(0x803B002B)

#define MAX_ENDPOINTS 16
#define MAX_FAULTS 64
#define HANDLE_MAGIC 0x48434E53u /* "HCNS" */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- allocation tracking ------------------------------------------------------- */

static void **live_allocs;
static size_t n_allocs, cap_allocs;
static int32_t bad_frees, bad_closes;

static int track(void *p) {
    if (n_allocs == cap_allocs) {
        size_t cap = cap_allocs ? cap_allocs * 2 : 64;
        void **grown = realloc(live_allocs, cap * sizeof(void *));
        if (!grown) return 0;
        live_allocs = grown;
        cap_allocs = cap;
    }
    live_allocs[n_allocs++] = p;
    return 1;
}

static int untrack(void *p) {
    for (size_t i = 0; i < n_allocs; i++) {
        if (live_allocs[i] == p) {
            live_allocs[i] = live_allocs[--n_allocs];
            return 1;
        }
    }
    return 0;
}

/* A copy of s handed to the caller (must be freed with CoTaskMemFree). */
static wchar_t *give(const wchar_t *s) {
    size_t n = wcslen(s) + 1;
    wchar_t *p = malloc(n * sizeof(wchar_t));
    if (!p) return NULL;
    wmemcpy(p, s, n);
    if (!track(p)) {
        free(p);
        return NULL;
    }
    return p;
}

/* A private copy (not counted: never handed out). */
static wchar_t *dup_private(const wchar_t *s) {
    size_t n = wcslen(s) + 1;
    wchar_t *p = malloc(n * sizeof(wchar_t));
    if (p) wmemcpy(p, s, n);
    return p;
}

EXPORT void CoTaskMemFree(void *p) {
    if (!p) return; /* CoTaskMemFree(NULL) is a no-op on Windows too */
    pthread_mutex_lock(&lock);
    if (untrack(p)) {
        free(p);
    } else {
        bad_frees++; /* not ours, or freed twice: count it, never free it */
    }
    pthread_mutex_unlock(&lock);
}

/* ---- growing wide strings ------------------------------------------------------ */

typedef struct {
    wchar_t *buf;
    size_t len, cap;
    int failed;
} wbuf;

static void wb_addn(wbuf *b, const wchar_t *s, size_t n) {
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (b->len + n + 1 > cap) cap *= 2;
        wchar_t *grown = realloc(b->buf, cap * sizeof(wchar_t));
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->buf = grown;
        b->cap = cap;
    }
    wmemcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = L'\0';
}

static void wb_add(wbuf *b, const wchar_t *s) { wb_addn(b, s, wcslen(s)); }

static void wb_add_guid(wbuf *b, const GUID *g) {
    wchar_t text[40];
    swprintf(text, 40, L"%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X",
             (unsigned)g->Data1, (unsigned)g->Data2, (unsigned)g->Data3,
             g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3],
             g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
    wb_add(b, text);
}

static void wb_add_uint(wbuf *b, unsigned long value) {
    wchar_t text[24];
    swprintf(text, 24, L"%lu", value);
    wb_add(b, text);
}

/* Hand a finished buffer to the caller; NULL when out of memory. */
static wchar_t *wb_give(wbuf *b) {
    wchar_t *out = NULL;
    if (!b->failed && b->buf) out = give(b->buf);
    free(b->buf);
    b->buf = NULL;
    return out;
}

/* ---- minimal JSON helpers ------------------------------------------------------- */

static int is_ws(wchar_t c) { return c == L' ' || c == L'\t' || c == L'\n' || c == L'\r'; }

/* 1 if s is one JSON object by bracket structure (strings and escapes respected). */
static int object_ok(const wchar_t *s) {
    const wchar_t *p = s;
    while (*p && is_ws(*p)) p++;
    if (*p != L'{') return 0;
    int depth = 0, in_string = 0;
    for (; *p; p++) {
        wchar_t c = *p;
        if (in_string) {
            if (c == L'\\') {
                if (!p[1]) return 0;
                p++;
            } else if (c == L'"') {
                in_string = 0;
            }
            continue;
        }
        if (c == L'"') in_string = 1;
        else if (c == L'{' || c == L'[') depth++;
        else if (c == L'}' || c == L']') {
            if (--depth < 0) return 0;
            if (depth == 0) {
                p++;
                while (*p && is_ws(*p)) p++;
                return *p == L'\0';
            }
        }
    }
    return 0;
}

/* The text between the outer braces of a valid object, trimmed (private copy). */
static wchar_t *object_inner(const wchar_t *s) {
    const wchar_t *open = wcschr(s, L'{');
    const wchar_t *close = wcsrchr(s, L'}');
    open++;
    while (open < close && is_ws(*open)) open++;
    while (close > open && is_ws(close[-1])) close--;
    size_t n = (size_t)(close - open);
    wchar_t *inner = malloc((n + 1) * sizeof(wchar_t));
    if (!inner) return NULL;
    wmemcpy(inner, open, n);
    inner[n] = L'\0';
    return inner;
}

/* Where the value of "key" starts (after the colon and blanks), or NULL. */
static const wchar_t *value_of(const wchar_t *json, const wchar_t *key) {
    size_t klen = wcslen(key);
    for (const wchar_t *p = json; p && *p; p++) {
        if (*p != L'"' || wcsncmp(p + 1, key, klen) != 0 || p[klen + 1] != L'"') continue;
        const wchar_t *q = p + klen + 2;
        while (*q && is_ws(*q)) q++;
        if (*q != L':') continue;
        q++;
        while (*q && is_ws(*q)) q++;
        return q;
    }
    return NULL;
}

/* Copy the plain string value of "key" (no escapes) into out; 1 on success. */
static int string_of(const wchar_t *json, const wchar_t *key, wchar_t *out, size_t cap) {
    const wchar_t *v = value_of(json, key);
    if (!v || *v != L'"') return 0;
    v++;
    size_t n = 0;
    while (v[n] && v[n] != L'"') {
        if (v[n] == L'\\' || n + 1 >= cap) return 0;
        n++;
    }
    if (v[n] != L'"') return 0;
    wmemcpy(out, v, n);
    out[n] = L'\0';
    return 1;
}

static int hex_value(wchar_t c) {
    if (c >= L'0' && c <= L'9') return (int)(c - L'0');
    if (c >= L'a' && c <= L'f') return (int)(c - L'a') + 10;
    if (c >= L'A' && c <= L'F') return (int)(c - L'A') + 10;
    return -1;
}

static int parse_guid(const wchar_t *s, GUID *g) {
    if (wcslen(s) != 36) return 0;
    uint8_t bytes[16];
    int k = 0;
    for (int i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != L'-') return 0;
            i++;
            continue;
        }
        int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
        if (hi < 0 || lo < 0) return 0;
        bytes[k++] = (uint8_t)(hi * 16 + lo);
        i += 2;
    }
    g->Data1 = ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) |
               ((uint32_t)bytes[2] << 8) | bytes[3];
    g->Data2 = (uint16_t)((bytes[4] << 8) | bytes[5]);
    g->Data3 = (uint16_t)((bytes[6] << 8) | bytes[7]);
    memcpy(g->Data4, bytes + 8, 8);
    return 1;
}

static int guid_eq(const GUID *a, const GUID *b) {
    return a->Data1 == b->Data1 && a->Data2 == b->Data2 && a->Data3 == b->Data3 &&
           memcmp(a->Data4, b->Data4, 8) == 0;
}

/* ---- state ----------------------------------------------------------------------- */

typedef struct ns {
    GUID id;
    wchar_t *inner;      /* the create settings without outer braces */
    wchar_t type[32];    /* Host unless the settings named one */
    int type_in_inner;   /* settings already carry "Type": do not emit it twice */
    uint32_t compartment;
    GUID endpoints[MAX_ENDPOINTS];
    int n_endpoints;
    struct ns *next;
} ns;

typedef struct handle {
    uint32_t magic;
    GUID id;
    struct handle *next;
} handle;

static ns *namespaces;
static handle *handles;
static int32_t open_handle_count;
static uint32_t next_compartment = 2;

static const char *const FUNCTIONS[] = {
    "HcnEnumerateNamespaces", "HcnCreateNamespace", "HcnOpenNamespace",
    "HcnModifyNamespace", "HcnQueryNamespaceProperties", "HcnDeleteNamespace",
    "HcnCloseNamespace",
};
#define N_FUNCTIONS (sizeof(FUNCTIONS) / sizeof(FUNCTIONS[0]))
static int32_t call_counts[N_FUNCTIONS];

static struct {
    int used;
    char function[40];
    HRESULT hr;
    wchar_t *record; /* private copy, or NULL for "no error record" */
} faults[MAX_FAULTS];

static wchar_t *last_settings, *last_query;

static const GUID HOST_DEFAULT_ID = {
    0x9A5F3F6Eu, 0x0D4C, 0x4E1B, {0x8C, 0x2A, 0x1F, 0x0E, 0x2D, 0x3C, 0x4B, 0x5A}};

static void count_call(const char *function) {
    for (size_t i = 0; i < N_FUNCTIONS; i++)
        if (strcmp(FUNCTIONS[i], function) == 0) call_counts[i]++;
}

static void remember(wchar_t **slot, const wchar_t *text) {
    free(*slot);
    *slot = text ? dup_private(text) : NULL;
}

static ns *find_ns(const GUID *id) {
    for (ns *n = namespaces; n; n = n->next)
        if (guid_eq(&n->id, id)) return n;
    return NULL;
}

static handle *find_handle(void *h) {
    for (handle *x = handles; x; x = x->next)
        if ((void *)x == h) return x; /* compare the address only: never deref a stranger */
    return NULL;
}

static void set_record(wchar_t **error_record, HRESULT hr, const wchar_t *message) {
    if (!error_record) return;
    wbuf b = {0};
    wb_add(&b, L"{\"Success\": false, \"Error\": \"");
    wb_add(&b, message);
    wb_add(&b, L"\", \"ErrorCode\": ");
    wb_add_uint(&b, (unsigned long)(uint32_t)hr);
    wb_add(&b, L"}");
    *error_record = wb_give(&b);
}

/* Random faults (double_fail_randomly): a xorshift32 stream, so a seed replays a run's
 * fault pattern as far as the threads' call order allows. */
static uint32_t random_per_million, random_state = 1;
static int32_t faults_injected;

static int random_fault(void) {
    if (!random_per_million) return 0;
    random_state ^= random_state << 13;
    random_state ^= random_state >> 17;
    random_state ^= random_state << 5;
    return random_state % 1000000u < random_per_million;
}

/* An armed fault for this function: fills the error record and returns 1. */
static int take_fault(const char *function, HRESULT *hr, wchar_t **error_record) {
    if (random_fault()) {
        faults_injected++;
        *hr = HR(0x80004005); /* E_FAIL, before the call has any effect */
        if (error_record)
            *error_record = give(L"{\"Success\": false, \"Error\": \"injected fault\", "
                                 L"\"ErrorCode\": 2147500037}");
        return 1;
    }
    for (int i = 0; i < MAX_FAULTS; i++) {
        if (!faults[i].used || strcmp(faults[i].function, function) != 0) continue;
        *hr = faults[i].hr;
        if (error_record && faults[i].record) *error_record = give(faults[i].record);
        free(faults[i].record);
        faults[i].record = NULL;
        faults[i].used = 0;
        return 1;
    }
    return 0;
}

static handle *new_handle(const GUID *id) {
    handle *h = calloc(1, sizeof(handle));
    if (!h) return NULL;
    h->magic = HANDLE_MAGIC;
    h->id = *id;
    h->next = handles;
    handles = h;
    open_handle_count++;
    return h;
}

static void drop_handle(handle *h) {
    for (handle **p = &handles; *p; p = &(*p)->next) {
        if (*p == h) {
            *p = h->next;
            h->magic = 0;
            free(h);
            open_handle_count--;
            return;
        }
    }
}

static HRESULT check_query(const wchar_t *query, wchar_t **error_record) {
    if (!query || !*query) return S_OK;
    if (!object_ok(query)) {
        set_record(error_record, HCN_E_INVALID_JSON, L"query is not a JSON object");
        return HCN_E_INVALID_JSON;
    }
    const wchar_t *filter = value_of(query, L"Filter");
    if (filter && *filter == L'"' && filter[1] != L'"') {
        set_record(error_record, E_NOTIMPL, L"the test double does not implement Filter");
        return E_NOTIMPL;
    }
    const wchar_t *flags = value_of(query, L"Flags");
    if (flags && *flags != L'0') {
        set_record(error_record, E_NOTIMPL, L"the test double does not implement Flags");
        return E_NOTIMPL;
    }
    return S_OK;
}

/* ---- the seven exports ---------------------------------------------------------- */

EXPORT HRESULT HcnEnumerateNamespaces(const wchar_t *query, wchar_t **namespaces_out,
                                      wchar_t **error_record) {
    if (!namespaces_out) return E_POINTER;
    pthread_mutex_lock(&lock);
    *namespaces_out = NULL;
    if (error_record) *error_record = NULL;
    count_call("HcnEnumerateNamespaces");
    remember(&last_query, query);
    HRESULT hr = S_OK;
    if (take_fault("HcnEnumerateNamespaces", &hr, error_record)) goto out;
    hr = check_query(query, error_record);
    if (hr != S_OK) goto out;
    wbuf b = {0};
    wb_add(&b, L"[");
    for (ns *n = namespaces; n; n = n->next) {
        if (n != namespaces) wb_add(&b, L", ");
        wb_add(&b, L"\"");
        wb_add_guid(&b, &n->id);
        wb_add(&b, L"\"");
    }
    wb_add(&b, L"]");
    *namespaces_out = wb_give(&b);
    if (!*namespaces_out) hr = E_OUTOFMEMORY;
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

static HRESULT add_namespace(const GUID *id, const wchar_t *settings, wchar_t **error_record,
                             ns **created) {
    if (find_ns(id)) {
        set_record(error_record, HR_ALREADY_EXISTS, L"a namespace with this ID exists");
        return HR_ALREADY_EXISTS;
    }
    ns *n = calloc(1, sizeof(ns));
    if (!n) return E_OUTOFMEMORY;
    n->inner = object_inner(settings);
    if (!n->inner) {
        free(n);
        return E_OUTOFMEMORY;
    }
    n->id = *id;
    n->type_in_inner = string_of(settings, L"Type", n->type, 32);
    if (!n->type_in_inner) wcscpy(n->type, L"Host");
    if (wcscmp(n->type, L"HostDefault") == 0) {
        for (ns *o = namespaces; o; o = o->next) {
            if (wcscmp(o->type, L"HostDefault") == 0) {
                free(n->inner);
                free(n);
                set_record(error_record, HCN_E_DEFAULT_NAMESPACE_EXISTS,
                           L"a HostDefault namespace exists");
                return HCN_E_DEFAULT_NAMESPACE_EXISTS;
            }
        }
        n->compartment = 1;
    } else {
        n->compartment = next_compartment++;
    }
    ns **tail = &namespaces; /* keep creation order for enumeration */
    while (*tail) tail = &(*tail)->next;
    *tail = n;
    *created = n;
    return S_OK;
}

EXPORT HRESULT HcnCreateNamespace(const GUID *id, const wchar_t *settings, void **namespace_out,
                                  wchar_t **error_record) {
    if (!id || !namespace_out) return E_POINTER;
    pthread_mutex_lock(&lock);
    *namespace_out = NULL;
    if (error_record) *error_record = NULL;
    count_call("HcnCreateNamespace");
    remember(&last_settings, settings);
    HRESULT hr = S_OK;
    if (take_fault("HcnCreateNamespace", &hr, error_record)) goto out;
    if (!settings || !object_ok(settings)) {
        hr = HCN_E_INVALID_JSON;
        set_record(error_record, hr, L"settings are not a JSON object");
        goto out;
    }
    ns *created = NULL;
    hr = add_namespace(id, settings, error_record, &created);
    if (hr != S_OK) goto out;
    *namespace_out = new_handle(id);
    if (!*namespace_out) hr = E_OUTOFMEMORY;
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

EXPORT HRESULT HcnOpenNamespace(const GUID *id, void **namespace_out, wchar_t **error_record) {
    if (!id || !namespace_out) return E_POINTER;
    pthread_mutex_lock(&lock);
    *namespace_out = NULL;
    if (error_record) *error_record = NULL;
    count_call("HcnOpenNamespace");
    HRESULT hr = S_OK;
    if (take_fault("HcnOpenNamespace", &hr, error_record)) goto out;
    if (!find_ns(id)) {
        hr = HR_NOT_FOUND;
        set_record(error_record, hr, L"namespace not found");
        goto out;
    }
    *namespace_out = new_handle(id);
    if (!*namespace_out) hr = E_OUTOFMEMORY;
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

/* The namespace behind a handle, or an HRESULT explaining why there is none. */
static HRESULT resolve(void *h, ns **found, wchar_t **error_record) {
    handle *x = find_handle(h);
    if (!x || x->magic != HANDLE_MAGIC) {
        set_record(error_record, E_HANDLE, L"invalid namespace handle");
        return E_HANDLE;
    }
    *found = find_ns(&x->id);
    if (!*found) {
        set_record(error_record, HR_NOT_FOUND, L"namespace no longer exists");
        return HR_NOT_FOUND;
    }
    return S_OK;
}

EXPORT HRESULT HcnModifyNamespace(void *namespace_handle, const wchar_t *settings,
                                  wchar_t **error_record) {
    pthread_mutex_lock(&lock);
    if (error_record) *error_record = NULL;
    count_call("HcnModifyNamespace");
    remember(&last_settings, settings);
    HRESULT hr = S_OK;
    ns *n = NULL;
    wchar_t resource[32], request[32], endpoint_text[64];
    GUID endpoint;
    if (take_fault("HcnModifyNamespace", &hr, error_record)) goto out;
    hr = resolve(namespace_handle, &n, error_record);
    if (hr != S_OK) goto out;
    if (!settings || !object_ok(settings)) {
        hr = HCN_E_INVALID_JSON;
        set_record(error_record, hr, L"modify request is not a JSON object");
        goto out;
    }
    if (!string_of(settings, L"ResourceType", resource, 32) ||
        wcscmp(resource, L"Endpoint") != 0 ||
        !string_of(settings, L"RequestType", request, 32) ||
        (wcscmp(request, L"Add") != 0 && wcscmp(request, L"Remove") != 0)) {
        hr = E_INVALIDARG;
        set_record(error_record, hr, L"unsupported modify request");
        goto out;
    }
    if (!string_of(settings, L"EndpointId", endpoint_text, 64) ||
        !parse_guid(endpoint_text, &endpoint)) {
        hr = HCN_E_GUID_CONVERSION_FAILURE;
        set_record(error_record, hr, L"EndpointId is not a GUID");
        goto out;
    }
    int at = -1;
    for (int i = 0; i < n->n_endpoints; i++)
        if (guid_eq(&n->endpoints[i], &endpoint)) at = i;
    if (wcscmp(request, L"Add") == 0) {
        for (ns *o = namespaces; o; o = o->next) {
            for (int i = 0; i < o->n_endpoints; i++) {
                if (guid_eq(&o->endpoints[i], &endpoint)) {
                    hr = HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS;
                    set_record(error_record, hr, L"endpoint already attached to a namespace");
                    goto out;
                }
            }
        }
        if (n->n_endpoints == MAX_ENDPOINTS) {
            hr = E_OUTOFMEMORY;
            goto out;
        }
        n->endpoints[n->n_endpoints++] = endpoint;
    } else {
        if (at < 0) {
            hr = HCN_E_ENDPOINT_NOT_FOUND;
            set_record(error_record, hr, L"endpoint not found");
            goto out;
        }
        n->endpoints[at] = n->endpoints[--n->n_endpoints];
    }
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

EXPORT HRESULT HcnQueryNamespaceProperties(void *namespace_handle, const wchar_t *query,
                                           wchar_t **properties, wchar_t **error_record) {
    if (!properties) return E_POINTER;
    pthread_mutex_lock(&lock);
    *properties = NULL;
    if (error_record) *error_record = NULL;
    count_call("HcnQueryNamespaceProperties");
    remember(&last_query, query);
    HRESULT hr = S_OK;
    ns *n = NULL;
    if (take_fault("HcnQueryNamespaceProperties", &hr, error_record)) goto out;
    hr = resolve(namespace_handle, &n, error_record);
    if (hr != S_OK) goto out;
    hr = check_query(query, error_record);
    if (hr != S_OK) goto out;
    wbuf b = {0};
    wb_add(&b, L"{");
    if (*n->inner) {
        wb_add(&b, n->inner);
        wb_add(&b, L", ");
    }
    wb_add(&b, L"\"ID\": \"");
    wb_add_guid(&b, &n->id);
    wb_add(&b, L"\", \"NamespaceId\": ");
    wb_add_uint(&b, n->compartment);
    if (!n->type_in_inner) {
        wb_add(&b, L", \"Type\": \"");
        wb_add(&b, n->type);
        wb_add(&b, L"\"");
    }
    wb_add(&b, L", \"Resources\": [");
    for (int i = 0; i < n->n_endpoints; i++) {
        if (i) wb_add(&b, L", ");
        wb_add(&b, L"{\"Type\": \"Endpoint\", \"Data\": {\"ID\": \"");
        wb_add_guid(&b, &n->endpoints[i]);
        wb_add(&b, L"\"}}");
    }
    wb_add(&b, L"]}");
    *properties = wb_give(&b);
    if (!*properties) hr = E_OUTOFMEMORY;
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

EXPORT HRESULT HcnDeleteNamespace(const GUID *id, wchar_t **error_record) {
    if (!id) return E_POINTER;
    pthread_mutex_lock(&lock);
    if (error_record) *error_record = NULL;
    count_call("HcnDeleteNamespace");
    HRESULT hr = S_OK;
    if (take_fault("HcnDeleteNamespace", &hr, error_record)) goto out;
    hr = HR_NOT_FOUND;
    for (ns **p = &namespaces; *p; p = &(*p)->next) {
        if (guid_eq(&(*p)->id, id)) {
            ns *gone = *p;
            *p = gone->next;
            free(gone->inner);
            free(gone);
            hr = S_OK;
            break;
        }
    }
    if (hr != S_OK) set_record(error_record, hr, L"namespace not found");
out:
    pthread_mutex_unlock(&lock);
    return hr;
}

EXPORT HRESULT HcnCloseNamespace(void *namespace_handle) {
    pthread_mutex_lock(&lock);
    count_call("HcnCloseNamespace");
    HRESULT hr = S_OK;
    int faulted = take_fault("HcnCloseNamespace", &hr, NULL);
    handle *h = find_handle(namespace_handle);
    if (h) {
        drop_handle(h); /* released even when a fault makes the call report failure */
    } else if (!faulted) {
        bad_closes++;
        hr = E_HANDLE;
    }
    pthread_mutex_unlock(&lock);
    return hr;
}

/* ---- controls for the tests ------------------------------------------------------ */

static int32_t read_counter(const int32_t *counter) {
    pthread_mutex_lock(&lock);
    int32_t value = *counter;
    pthread_mutex_unlock(&lock);
    return value;
}

/* Forget everything (outstanding strings are freed); optionally add HostDefault. */
EXPORT void double_reset(int32_t with_host_default) {
    pthread_mutex_lock(&lock);
    while (namespaces) {
        ns *n = namespaces;
        namespaces = n->next;
        free(n->inner);
        free(n);
    }
    while (handles) {
        handle *h = handles;
        handles = h->next;
        free(h);
    }
    for (size_t i = 0; i < n_allocs; i++) free(live_allocs[i]);
    n_allocs = 0;
    for (int i = 0; i < MAX_FAULTS; i++) {
        free(faults[i].record);
        faults[i].record = NULL;
        faults[i].used = 0;
    }
    memset(call_counts, 0, sizeof(call_counts));
    random_per_million = 0;
    faults_injected = 0;
    open_handle_count = 0;
    bad_frees = bad_closes = 0;
    next_compartment = 2;
    remember(&last_settings, NULL);
    remember(&last_query, NULL);
    if (with_host_default) {
        ns *created = NULL;
        add_namespace(&HOST_DEFAULT_ID, L"{\"SchemaVersion\": {\"Major\": 2, \"Minor\": 0}, "
                                        L"\"Type\": \"HostDefault\"}",
                      NULL, &created);
    }
    pthread_mutex_unlock(&lock);
}

/* Make the next call of `function` fail with `hr` (and this error record, or none). */
EXPORT int32_t double_fail_next(const char *function, int32_t hr, const wchar_t *error_record) {
    int32_t armed = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_FAULTS && function && strlen(function) < 40; i++) {
        if (faults[i].used) continue;
        faults[i].used = 1;
        strcpy(faults[i].function, function);
        faults[i].hr = hr;
        faults[i].record = error_record ? dup_private(error_record) : NULL;
        armed = 1;
        break;
    }
    pthread_mutex_unlock(&lock);
    return armed;
}

/* From now on every call fails (E_FAIL, before any effect) with this probability. */
EXPORT void double_fail_randomly(uint32_t per_million, uint32_t seed) {
    pthread_mutex_lock(&lock);
    random_per_million = per_million;
    random_state = seed ? seed : 1;
    pthread_mutex_unlock(&lock);
}

EXPORT int32_t double_faults_injected(void) { return read_counter(&faults_injected); }

/* Whether a namespace with this ID exists (no call is counted, no fault can hit it). */
EXPORT int32_t double_namespace_exists(const GUID *id) {
    pthread_mutex_lock(&lock);
    int32_t found = id && find_ns(id) ? 1 : 0;
    pthread_mutex_unlock(&lock);
    return found;
}

EXPORT void double_host_default_id(GUID *out) { *out = HOST_DEFAULT_ID; }

EXPORT int32_t double_outstanding_allocations(void) {
    pthread_mutex_lock(&lock);
    int32_t value = (int32_t)n_allocs;
    pthread_mutex_unlock(&lock);
    return value;
}

EXPORT int32_t double_open_handles(void) { return read_counter(&open_handle_count); }
EXPORT int32_t double_bad_frees(void) { return read_counter(&bad_frees); }
EXPORT int32_t double_bad_closes(void) { return read_counter(&bad_closes); }

EXPORT int32_t double_namespace_count(void) {
    pthread_mutex_lock(&lock);
    int32_t count = 0;
    for (ns *n = namespaces; n; n = n->next) count++;
    pthread_mutex_unlock(&lock);
    return count;
}

EXPORT int32_t double_call_count(const char *function) {
    pthread_mutex_lock(&lock);
    int32_t count = -1;
    for (size_t i = 0; i < N_FUNCTIONS; i++)
        if (function && strcmp(FUNCTIONS[i], function) == 0) count = call_counts[i];
    pthread_mutex_unlock(&lock);
    return count;
}

/* The settings text the last create/modify received (valid until the next call). */
EXPORT const wchar_t *double_last_settings(void) { return last_settings ? last_settings : L""; }
/* The query text the last enumerate/query received. */
EXPORT const wchar_t *double_last_query(void) { return last_query ? last_query : L""; }
