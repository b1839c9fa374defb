#include <string.h>

#include "mlvm/kernels.h" /* MLVM_MAX_RANK */
#include "mlvm/params.h"

/* The CRC-32 table (byte-at-a-time): 1 KiB of constants. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xEE0E612Cu, 0x990951BAu, 0x076DC419u, 0x706AF48Fu,
    0xE963A535u, 0x9E6495A3u, 0x0EDB8832u, 0x79DCB8A4u, 0xE0D5E91Eu, 0x97D2D988u,
    0x09B64C2Bu, 0x7EB17CBDu, 0xE7B82D07u, 0x90BF1D91u, 0x1DB71064u, 0x6AB020F2u,
    0xF3B97148u, 0x84BE41DEu, 0x1ADAD47Du, 0x6DDDE4EBu, 0xF4D4B551u, 0x83D385C7u,
    0x136C9856u, 0x646BA8C0u, 0xFD62F97Au, 0x8A65C9ECu, 0x14015C4Fu, 0x63066CD9u,
    0xFA0F3D63u, 0x8D080DF5u, 0x3B6E20C8u, 0x4C69105Eu, 0xD56041E4u, 0xA2677172u,
    0x3C03E4D1u, 0x4B04D447u, 0xD20D85FDu, 0xA50AB56Bu, 0x35B5A8FAu, 0x42B2986Cu,
    0xDBBBC9D6u, 0xACBCF940u, 0x32D86CE3u, 0x45DF5C75u, 0xDCD60DCFu, 0xABD13D59u,
    0x26D930ACu, 0x51DE003Au, 0xC8D75180u, 0xBFD06116u, 0x21B4F4B5u, 0x56B3C423u,
    0xCFBA9599u, 0xB8BDA50Fu, 0x2802B89Eu, 0x5F058808u, 0xC60CD9B2u, 0xB10BE924u,
    0x2F6F7C87u, 0x58684C11u, 0xC1611DABu, 0xB6662D3Du, 0x76DC4190u, 0x01DB7106u,
    0x98D220BCu, 0xEFD5102Au, 0x71B18589u, 0x06B6B51Fu, 0x9FBFE4A5u, 0xE8B8D433u,
    0x7807C9A2u, 0x0F00F934u, 0x9609A88Eu, 0xE10E9818u, 0x7F6A0DBBu, 0x086D3D2Du,
    0x91646C97u, 0xE6635C01u, 0x6B6B51F4u, 0x1C6C6162u, 0x856530D8u, 0xF262004Eu,
    0x6C0695EDu, 0x1B01A57Bu, 0x8208F4C1u, 0xF50FC457u, 0x65B0D9C6u, 0x12B7E950u,
    0x8BBEB8EAu, 0xFCB9887Cu, 0x62DD1DDFu, 0x15DA2D49u, 0x8CD37CF3u, 0xFBD44C65u,
    0x4DB26158u, 0x3AB551CEu, 0xA3BC0074u, 0xD4BB30E2u, 0x4ADFA541u, 0x3DD895D7u,
    0xA4D1C46Du, 0xD3D6F4FBu, 0x4369E96Au, 0x346ED9FCu, 0xAD678846u, 0xDA60B8D0u,
    0x44042D73u, 0x33031DE5u, 0xAA0A4C5Fu, 0xDD0D7CC9u, 0x5005713Cu, 0x270241AAu,
    0xBE0B1010u, 0xC90C2086u, 0x5768B525u, 0x206F85B3u, 0xB966D409u, 0xCE61E49Fu,
    0x5EDEF90Eu, 0x29D9C998u, 0xB0D09822u, 0xC7D7A8B4u, 0x59B33D17u, 0x2EB40D81u,
    0xB7BD5C3Bu, 0xC0BA6CADu, 0xEDB88320u, 0x9ABFB3B6u, 0x03B6E20Cu, 0x74B1D29Au,
    0xEAD54739u, 0x9DD277AFu, 0x04DB2615u, 0x73DC1683u, 0xE3630B12u, 0x94643B84u,
    0x0D6D6A3Eu, 0x7A6A5AA8u, 0xE40ECF0Bu, 0x9309FF9Du, 0x0A00AE27u, 0x7D079EB1u,
    0xF00F9344u, 0x8708A3D2u, 0x1E01F268u, 0x6906C2FEu, 0xF762575Du, 0x806567CBu,
    0x196C3671u, 0x6E6B06E7u, 0xFED41B76u, 0x89D32BE0u, 0x10DA7A5Au, 0x67DD4ACCu,
    0xF9B9DF6Fu, 0x8EBEEFF9u, 0x17B7BE43u, 0x60B08ED5u, 0xD6D6A3E8u, 0xA1D1937Eu,
    0x38D8C2C4u, 0x4FDFF252u, 0xD1BB67F1u, 0xA6BC5767u, 0x3FB506DDu, 0x48B2364Bu,
    0xD80D2BDAu, 0xAF0A1B4Cu, 0x36034AF6u, 0x41047A60u, 0xDF60EFC3u, 0xA867DF55u,
    0x316E8EEFu, 0x4669BE79u, 0xCB61B38Cu, 0xBC66831Au, 0x256FD2A0u, 0x5268E236u,
    0xCC0C7795u, 0xBB0B4703u, 0x220216B9u, 0x5505262Fu, 0xC5BA3BBEu, 0xB2BD0B28u,
    0x2BB45A92u, 0x5CB36A04u, 0xC2D7FFA7u, 0xB5D0CF31u, 0x2CD99E8Bu, 0x5BDEAE1Du,
    0x9B64C2B0u, 0xEC63F226u, 0x756AA39Cu, 0x026D930Au, 0x9C0906A9u, 0xEB0E363Fu,
    0x72076785u, 0x05005713u, 0x95BF4A82u, 0xE2B87A14u, 0x7BB12BAEu, 0x0CB61B38u,
    0x92D28E9Bu, 0xE5D5BE0Du, 0x7CDCEFB7u, 0x0BDBDF21u, 0x86D3D2D4u, 0xF1D4E242u,
    0x68DDB3F8u, 0x1FDA836Eu, 0x81BE16CDu, 0xF6B9265Bu, 0x6FB077E1u, 0x18B74777u,
    0x88085AE6u, 0xFF0F6A70u, 0x66063BCAu, 0x11010B5Cu, 0x8F659EFFu, 0xF862AE69u,
    0x616BFFD3u, 0x166CCF45u, 0xA00AE278u, 0xD70DD2EEu, 0x4E048354u, 0x3903B3C2u,
    0xA7672661u, 0xD06016F7u, 0x4969474Du, 0x3E6E77DBu, 0xAED16A4Au, 0xD9D65ADCu,
    0x40DF0B66u, 0x37D83BF0u, 0xA9BCAE53u, 0xDEBB9EC5u, 0x47B2CF7Fu, 0x30B5FFE9u,
    0xBDBDF21Cu, 0xCABAC28Au, 0x53B39330u, 0x24B4A3A6u, 0xBAD03605u, 0xCDD70693u,
    0x54DE5729u, 0x23D967BFu, 0xB3667A2Eu, 0xC4614AB8u, 0x5D681B02u, 0x2A6F2B94u,
    0xB40BBE37u, 0xC30C8EA1u, 0x5A05DF1Bu, 0x2D02EF8Du
};

uint32_t mlvm_crc32(uint32_t crc, const unsigned char *data, size_t n)
{
    size_t i;
    crc = ~crc;
    for (i = 0; i < n; ++i)
        crc = crc_table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

/* Little-endian reads that need no alignment and work on any host. */
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

typedef struct entry {
    uint64_t name_offset, offset, bytes;
    uint32_t name_bytes, dtype, rank;
    int64_t dims[MLVM_MAX_RANK];
} entry_t;

static void read_entry(const unsigned char *p, entry_t *e)
{
    uint32_t d;
    e->name_offset = le64(p);
    e->name_bytes = le32(p + 8);
    e->dtype = le32(p + 12);
    e->rank = le32(p + 16);
    for (d = 0; d < MLVM_MAX_RANK; ++d)
        e->dims[d] = (int64_t)le64(p + 24 + 8 * d);
    e->offset = le64(p + 88);
    e->bytes = le64(p + 96);
}

/* [off, off + n) inside a file of `total` bytes, without overflow. */
static int inside(uint64_t off, uint64_t n, uint64_t total)
{
    return off <= total && n <= total - off;
}

static mlvm_status_t fail(const char **what, const char *name, mlvm_status_t st)
{
    if (what != NULL)
        *what = name;
    return st;
}

/* The file as a whole: header, checksum, and every entry inside it. */
static mlvm_status_t check_file(const unsigned char *b, size_t blob_bytes, const char **what)
{
    uint64_t total, table, data, count, k;
    if (memcmp(b, "MLVMPRMS", 8) != 0)
        return fail(what, "magic", MLVM_ERR_INVALID);
    if (le32(b + 8) != MLVM_PARAMS_VERSION)
        return fail(what, "version", MLVM_ERR_INVALID);
    count = le32(b + 12);
    table = le64(b + 16);
    data = le64(b + 24);
    total = le64(b + 32);
    if (total != (uint64_t)blob_bytes)
        return fail(what, "size", MLVM_ERR_INVALID);
    if (table != MLVM_PARAMS_HEADER_BYTES || count > total / MLVM_PARAMS_ENTRY_BYTES
        || !inside(table, count * MLVM_PARAMS_ENTRY_BYTES, total) || data > total)
        return fail(what, "table", MLVM_ERR_INVALID);
    if (mlvm_crc32(0, b + MLVM_PARAMS_HEADER_BYTES, blob_bytes - MLVM_PARAMS_HEADER_BYTES)
        != le32(b + 40))
        return fail(what, "checksum", MLVM_ERR_INVALID);
    for (k = 0; k < count; ++k) {
        entry_t e;
        read_entry(b + table + k * MLVM_PARAMS_ENTRY_BYTES, &e);
        if (!inside(e.name_offset, e.name_bytes, total) || !inside(e.offset, e.bytes, total)
            || e.offset < data || e.offset % MLVM_PARAMS_ALIGN != 0 || e.rank > MLVM_MAX_RANK)
            return fail(what, "table", MLVM_ERR_INVALID);
    }
    return MLVM_OK;
}

/* The entry named `name`, or -1. */
static int64_t find(const unsigned char *b, const char *name, entry_t *e)
{
    const uint64_t count = le32(b + 12), table = le64(b + 16);
    const size_t n = strlen(name);
    uint64_t k;
    for (k = 0; k < count; ++k) {
        read_entry(b + table + k * MLVM_PARAMS_ENTRY_BYTES, e);
        if (e->name_bytes == n && memcmp(b + e->name_offset, name, n) == 0)
            return (int64_t)k;
    }
    return -1;
}

static int matches(const entry_t *e, const mlvm_tensor_desc_t *t)
{
    uint64_t n = (uint64_t)mlvm_dtype_size(t->dtype); /* bytes: one element, then all */
    int32_t d;
    if (e->dtype != (uint32_t)t->dtype || e->rank != (uint32_t)t->rank)
        return 0;
    for (d = 0; d < t->rank; ++d) {
        if (e->dims[d] != t->dims[d])
            return 0;
        n *= (uint64_t)t->dims[d];
    }
    return e->bytes == n;
}

mlvm_status_t mlvm_instance_bind_params(mlvm_instance_t *inst, const void *blob,
                                        size_t blob_bytes, const void **slots,
                                        const char **what)
{
    const unsigned char *b = (const unsigned char *)blob;
    const mlvm_module_t *m;
    mlvm_status_t st;
    int32_t i;
    if (inst == NULL || inst->module == NULL)
        return fail(what, "arguments", MLVM_ERR_INVALID);
    if (blob_bytes < MLVM_PARAMS_HEADER_BYTES)
        return fail(what, "size", MLVM_ERR_INVALID);
    if (blob == NULL || (uintptr_t)blob % MLVM_PARAMS_ALIGN != 0)
        return fail(what, "arguments", MLVM_ERR_INVALID);
    m = inst->module;
    if (m->num_params < 0 || (m->num_params > 0 && (m->params == NULL || slots == NULL)))
        return fail(what, "arguments", MLVM_ERR_INVALID);
    st = check_file(b, blob_bytes, what);
    if (st != MLVM_OK)
        return st;
    for (i = 0; i < m->num_params; ++i) {
        const mlvm_tensor_desc_t *t = &m->params[i];
        entry_t e;
        if (t->name == NULL || find(b, t->name, &e) < 0)
            return fail(what, t->name, MLVM_ERR_IMPORT);
        if (!matches(&e, t))
            return fail(what, t->name, MLVM_ERR_SHAPE);
        slots[i] = b + e.offset;
    }
    inst->params = slots;
    return MLVM_OK;
}
