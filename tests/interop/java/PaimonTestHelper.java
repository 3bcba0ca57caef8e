/*
 * Test-only bridge between pytest (through py4j) and the real Java Paimon 0.9.
 *
 * py4j cannot call public interface methods through Paimon's non-public
 * implementation classes, and per-field py4j calls are far too slow for bulk
 * data, so every operation the tests need is one public static method here
 * that takes and returns plain strings / numbers (data travels as JSON text).
 *
 * JSON rendering of values (see render()):
 *   BOOLEAN -> true/false; TINYINT..BIGINT -> integer; FLOAT -> the float widened
 *   to double (what pyarrow gives); DOUBLE -> number (NaN/Inf as strings);
 *   CHAR/VARCHAR -> string; DECIMAL -> plain string ("12.30");
 *   BINARY/VARBINARY -> base64 string; DATE -> "yyyy-MM-dd"; TIME -> LocalTime.toString;
 *   TIMESTAMP / TIMESTAMP_LTZ -> Paimon Timestamp.toString() (= LocalDateTime.toString,
 *   LTZ in UTC, e.g. "2024-01-01T10:00" or "2024-01-01T10:00:00.123456");
 *   ARRAY / MULTISET -> JSON array; MAP -> JSON array of [key, value] pairs;
 *   ROW -> JSON object keyed by field name.
 */

import java.math.BigDecimal;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.paimon.FileStore;
import org.apache.paimon.AppendOnlyFileStore;
import org.apache.paimon.append.UnawareAppendCompactionTask;
import org.apache.paimon.append.UnawareAppendTableCompactionCoordinator;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.consumer.Consumer;
import org.apache.paimon.consumer.ConsumerManager;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.operation.AppendOnlyFileStoreWrite;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.stats.Statistics;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowKeyExtractor;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.system.SystemTableLoader;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

public final class PaimonTestHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final Map<String, Catalog> CATALOGS = new HashMap<>();
    private static IOManager ioManager;

    private PaimonTestHelper() {}

    /** Must be called once: DV / lookup writes and reads need a spill directory. */
    public static synchronized void init(String tempDir) {
        if (ioManager == null) {
            ioManager = IOManager.create(tempDir);
        }
    }

    public static String version() {
        return "paimon-test-helper/1";
    }

    // ------------------------------------------------------------------ catalog

    /**
     * The catalog of a spec: a warehouse path (filesystem catalog), or, when the spec starts
     * with '{', a JSON object of catalog options ({"metastore": "jdbc", "uri": ..., "warehouse": ...}).
     * One instance per spec string, reused until {@link #closeCatalog}.
     */
    static synchronized Catalog catalog(String spec) {
        return CATALOGS.computeIfAbsent(
                spec,
                s -> {
                    Options options = new Options();
                    if (s.trim().startsWith("{")) {
                        try {
                            Iterator<Map.Entry<String, JsonNode>> it = MAPPER.readTree(s).fields();
                            while (it.hasNext()) {
                                Map.Entry<String, JsonNode> e = it.next();
                                options.set(e.getKey(), e.getValue().asText());
                            }
                        } catch (Exception e) {
                            throw new IllegalArgumentException("bad catalog spec " + s, e);
                        }
                    } else {
                        options.set("warehouse", s);
                    }
                    return CatalogFactory.createCatalog(CatalogContext.create(options));
                });
    }

    /** Close and forget the catalog of a spec (releases its connections, e.g. a JDBC pool). */
    public static synchronized void closeCatalog(String spec) throws Exception {
        Catalog c = CATALOGS.remove(spec);
        if (c != null) {
            c.close();
        }
    }

    private static String objectName(String table, String branch) {
        if (branch == null || branch.isEmpty() || branch.equals("main")) {
            return table;
        }
        return table + "$branch_" + branch;
    }

    private static FileStoreTable table(String warehouse, String db, String table, String branch)
            throws Exception {
        return (FileStoreTable)
                catalog(warehouse).getTable(Identifier.create(db, objectName(table, branch)));
    }

    public static String listSystemTables() throws Exception {
        return MAPPER.writeValueAsString(SystemTableLoader.SYSTEM_TABLES);
    }

    // ------------------------------------------------------------------ DDL

    /** columnsJson: [[name, sqlType], ...]; types may nest ARRAY<..>, MAP<..,..>, MULTISET<..>, ROW<n t, ..>. */
    public static void createTable(
            String warehouse,
            String db,
            String table,
            String columnsJson,
            String primaryKeysJson,
            String partitionKeysJson,
            String optionsJson)
            throws Exception {
        Catalog catalog = catalog(warehouse);
        catalog.createDatabase(db, true);
        Schema.Builder builder = Schema.newBuilder();
        for (JsonNode col : MAPPER.readTree(columnsJson)) {
            builder.column(col.get(0).asText(), parseType(col.get(1).asText()));
        }
        builder.primaryKey(stringList(primaryKeysJson));
        builder.partitionKeys(stringList(partitionKeysJson));
        builder.options(stringMap(optionsJson));
        catalog.createTable(Identifier.create(db, table), builder.build(), false);
    }

    /** changesJson: [{"set": {k: v}}, {"remove": k}, {"add": [name, type]}, {"rename": [old, new]}, {"drop": name}]. */
    public static void alterTable(String warehouse, String db, String table, String changesJson)
            throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode change : MAPPER.readTree(changesJson)) {
            if (change.has("set")) {
                Iterator<Map.Entry<String, JsonNode>> it = change.get("set").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    changes.add(SchemaChange.setOption(e.getKey(), e.getValue().asText()));
                }
            } else if (change.has("remove")) {
                changes.add(SchemaChange.removeOption(change.get("remove").asText()));
            } else if (change.has("add")) {
                JsonNode a = change.get("add");
                changes.add(SchemaChange.addColumn(a.get(0).asText(), parseType(a.get(1).asText())));
            } else if (change.has("rename")) {
                JsonNode r = change.get("rename");
                changes.add(SchemaChange.renameColumn(r.get(0).asText(), r.get(1).asText()));
            } else if (change.has("drop")) {
                changes.add(SchemaChange.dropColumn(change.get("drop").asText()));
            } else {
                throw new IllegalArgumentException("unknown schema change " + change);
            }
        }
        catalog(warehouse).alterTable(Identifier.create(db, table), changes, false);
    }

    // ------------------------------------------------------------------ writes

    /**
     * Writes all rows in ONE batch commit. rowsJson: [{col: value}, ...] (missing columns are
     * NULL); rowKindsJson: null or ["+I", "-D", ...]; overwriteJson: null, or a partition spec
     * object ({} = overwrite everything). Returns the latest snapshot id after the commit.
     */
    public static long write(
            String warehouse,
            String db,
            String table,
            String branch,
            String rowsJson,
            String rowKindsJson,
            String overwriteJson)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, branch);
        RowType rowType = t.rowType();
        JsonNode rows = MAPPER.readTree(rowsJson);
        JsonNode kinds = rowKindsJson == null ? null : MAPPER.readTree(rowKindsJson);
        BatchWriteBuilder builder = t.newBatchWriteBuilder();
        if (overwriteJson != null) {
            builder = builder.withOverwrite(stringMap(overwriteJson));
        }
        List<DataField> fields = rowType.getFields();
        // Dynamic-bucket tables need a bucket per row: Java's own HashBucketAssigner (which loads
        // the existing HASH index, so updated keys keep their bucket), as Flink/Spark writers do.
        HashBucketAssigner assigner = null;
        RowKeyExtractor extractor = null;
        if (t.bucketMode() == BucketMode.HASH_DYNAMIC) {
            assigner =
                    new HashBucketAssigner(
                            t.snapshotManager(),
                            UUID.randomUUID().toString(),
                            t.store().newIndexFileHandler(),
                            1,
                            1,
                            0,
                            t.coreOptions().dynamicBucketTargetRowNum());
            extractor = t.createRowKeyExtractor();
        } else if (t.bucketMode() == BucketMode.CROSS_PARTITION) {
            throw new UnsupportedOperationException("cross-partition update tables are not supported by the helper");
        }
        try (BatchTableWrite write = builder.newWrite()) {
            write.withIOManager(ioManager);
            int i = 0;
            for (JsonNode row : rows) {
                RowKind kind =
                        kinds == null ? RowKind.INSERT : RowKind.fromShortString(kinds.get(i).asText());
                GenericRow out = new GenericRow(kind, fields.size());
                for (int f = 0; f < fields.size(); f++) {
                    DataField field = fields.get(f);
                    out.setField(f, toInternal(row.get(field.name()), field.type()));
                }
                if (assigner != null) {
                    extractor.setRecord(out);
                    write.write(out, assigner.assign(extractor.partition(), extractor.trimmedPrimaryKey().hashCode()));
                } else {
                    write.write(out);
                }
                i++;
            }
            List<CommitMessage> messages = write.prepareCommit();
            try (BatchTableCommit commit = builder.newCommit()) {
                commit.commit(messages);
            }
        }
        return latest(warehouse, db, table, branch);
    }

    private static long latest(String warehouse, String db, String table, String branch)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, branch);
        return t.latestSnapshotId().isPresent() ? t.latestSnapshotId().getAsLong() : -1L;
    }

    /**
     * Compacts one (partition, bucket), every bucket of a partition (bucket null) or the whole
     * table (partition null) in one commit. Bucket-unaware append tables go through the
     * compaction coordinator, whose thresholds come from the table options (overridable with
     * optionsJson). Returns the latest snapshot id.
     */
    public static long compact(
            String warehouse,
            String db,
            String table,
            String partitionJson,
            Integer bucket,
            boolean full,
            String optionsJson)
            throws Exception {
        Map<String, String> dyn = new HashMap<>();
        dyn.put("write-only", "false");
        if (optionsJson != null) {
            dyn.putAll(stringMap(optionsJson));
        }
        FileStoreTable t = table(warehouse, db, table, null).copy(dyn);
        BatchWriteBuilder builder = t.newBatchWriteBuilder();
        List<CommitMessage> messages = new ArrayList<>();
        BinaryRow wanted = partitionJson == null ? null : partitionRow(t, MAPPER.readTree(partitionJson));
        if (t.bucketMode() == BucketMode.BUCKET_UNAWARE) {
            AppendOnlyFileStoreWrite write =
                    ((AppendOnlyFileStore) (FileStore<?>) t.store())
                            .newWrite(UUID.randomUUID().toString());
            write.withIOManager(ioManager);
            List<UnawareAppendCompactionTask> tasks = new UnawareAppendTableCompactionCoordinator(t, false).run();
            for (UnawareAppendCompactionTask task : tasks) {
                if (wanted == null || wanted.equals(task.partition())) {
                    messages.add(task.doCompact(t, write));
                }
            }
            write.close();
        } else {
            Set<List<Object>> targets = new LinkedHashSet<>();
            if (wanted != null && bucket != null) {
                targets.add(List.of(wanted, bucket));
            } else {
                for (Split split : t.newReadBuilder().newScan().plan().splits()) {
                    DataSplit ds = (DataSplit) split;
                    if ((wanted == null || wanted.equals(ds.partition()))
                            && (bucket == null || bucket == ds.bucket())) {
                        targets.add(List.of(ds.partition(), ds.bucket()));
                    }
                }
            }
            try (BatchTableWrite write = builder.newWrite()) {
                write.withIOManager(ioManager);
                for (List<Object> target : targets) {
                    write.compact((BinaryRow) target.get(0), (Integer) target.get(1), full);
                }
                messages = write.prepareCommit();
            }
        }
        try (BatchTableCommit commit = builder.newCommit()) {
            commit.commit(messages);
        }
        return latest(warehouse, db, table, null);
    }

    private static BinaryRow partitionRow(FileStoreTable t, JsonNode spec) {
        RowType partType = t.schema().logicalPartitionType();
        GenericRow row = new GenericRow(partType.getFieldCount());
        for (int i = 0; i < partType.getFieldCount(); i++) {
            DataField f = partType.getFields().get(i);
            JsonNode v = spec.get(f.name());
            if (v == null) {
                throw new IllegalArgumentException("partition spec lacks " + f.name());
            }
            row.setField(i, toInternal(v, f.type()));
        }
        return new InternalRowSerializer(partType).toBinaryRow(row).copy();
    }

    // ------------------------------------------------------------------ tags, branches, maintenance

    /** snapshotId null = latest snapshot. */
    public static void createTag(String warehouse, String db, String table, String name, Long snapshotId)
            throws Exception {
        Table t = table(warehouse, db, table, null);
        if (snapshotId == null) {
            t.createTag(name);
        } else {
            t.createTag(name, snapshotId);
        }
    }

    public static void deleteTag(String warehouse, String db, String table, String name) throws Exception {
        table(warehouse, db, table, null).deleteTag(name);
    }

    /** fromTag null = empty branch (schema only). */
    public static void createBranch(String warehouse, String db, String table, String name, String fromTag)
            throws Exception {
        Table t = table(warehouse, db, table, null);
        if (fromTag == null) {
            t.createBranch(name);
        } else {
            t.createBranch(name, fromTag);
        }
    }

    public static void rollbackToSnapshot(String warehouse, String db, String table, long snapshotId)
            throws Exception {
        table(warehouse, db, table, null).rollbackTo(snapshotId);
    }

    public static void rollbackToTag(String warehouse, String db, String table, String tag) throws Exception {
        table(warehouse, db, table, null).rollbackTo(tag);
    }

    /** Null arguments keep the table's own option. Returns the number of expired snapshots. */
    public static int expire(
            String warehouse,
            String db,
            String table,
            Integer retainMax,
            Integer retainMin,
            Long olderThanMillis,
            Integer maxDeletes)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, null);
        org.apache.paimon.CoreOptions o = t.coreOptions();
        ExpireConfig.Builder b =
                ExpireConfig.builder()
                        .snapshotRetainMax(retainMax != null ? retainMax : o.snapshotNumRetainMax())
                        .snapshotRetainMin(retainMin != null ? retainMin : o.snapshotNumRetainMin())
                        .snapshotTimeRetain(
                                olderThanMillis != null
                                        ? Duration.ofMillis(olderThanMillis)
                                        : o.snapshotTimeRetain())
                        .snapshotMaxDeletes(maxDeletes != null ? maxDeletes : o.snapshotExpireLimit());
        return t.newExpireSnapshots().config(b.build()).expire();
    }

    public static void resetConsumer(String warehouse, String db, String table, String id, long nextSnapshot)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, null);
        new ConsumerManager(t.fileIO(), t.location()).resetConsumer(id, new Consumer(nextSnapshot));
    }

    /**
     * A minimal ANALYZE: commits table statistics (merged record count and total data-file size of
     * the latest snapshot, no column stats) the way Spark's ANALYZE TABLE stores them.
     */
    public static long analyze(String warehouse, String db, String table) throws Exception {
        FileStoreTable t = table(warehouse, db, table, null);
        long snapshotId = t.latestSnapshotId().getAsLong();
        long count = 0;
        long size = 0;
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        for (Split s : splits) {
            for (DataFileMeta f : ((DataSplit) s).dataFiles()) {
                size += f.fileSize();
            }
        }
        try (RecordReader<InternalRow> reader = rb.newRead().withIOManager(ioManager).createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                while (batch.next() != null) {
                    count++;
                }
                batch.releaseBatch();
            }
        }
        Statistics stats = new Statistics(snapshotId, t.schema().id(), count, size);
        t.store().newCommit(UUID.randomUUID().toString()).commitStatistics(stats, BatchWriteBuilder.COMMIT_IDENTIFIER);
        return latest(warehouse, db, table, null);
    }

    // ------------------------------------------------------------------ reads

    /** Merged batch read; snapshotId null = latest. {"columns", "types", "kinds", "rows"}. */
    public static String read(String warehouse, String db, String table, String branch, Long snapshotId)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, branch);
        if (snapshotId != null) {
            Map<String, String> dyn = new HashMap<>();
            dyn.put("scan.snapshot-id", String.valueOf(snapshotId));
            t = t.copy(dyn);
        }
        return readTable(t, true);
    }

    /** Reads system table `name` of db.table (optionally of a branch). {"columns", "types", "rows"}. */
    public static String systemTable(String warehouse, String db, String table, String branch, String name)
            throws Exception {
        Table t = catalog(warehouse).getTable(Identifier.create(db, objectName(table, branch) + "$" + name));
        return readTable(t, false);
    }

    private static String readTable(Table t, boolean withKinds) throws Exception {
        RowType rowType = t.rowType();
        List<DataField> fields = rowType.getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        ObjectNode result = NODES.objectNode();
        ArrayNode columns = result.putArray("columns");
        ArrayNode types = result.putArray("types");
        ArrayNode roots = result.putArray("roots");
        for (int i = 0; i < fields.size(); i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
            columns.add(fields.get(i).name());
            types.add(fields.get(i).type().asSQLString());
            roots.add(fields.get(i).type().getTypeRoot().name());
        }
        ArrayNode kinds = withKinds ? result.putArray("kinds") : null;
        ArrayNode rows = result.putArray("rows");
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        try (RecordReader<InternalRow> reader = rb.newRead().withIOManager(ioManager).createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    ArrayNode out = rows.addArray();
                    for (int i = 0; i < getters.length; i++) {
                        out.add(render(getters[i].getFieldOrNull(row), fields.get(i).type()));
                    }
                    if (kinds != null) {
                        kinds.add(row.getRowKind().shortString());
                    }
                }
                batch.releaseBatch();
            }
        }
        return MAPPER.writeValueAsString(result);
    }

    // ------------------------------------------------------------------ value conversion

    private static JsonNode render(Object v, DataType type) {
        if (v == null) {
            return NODES.nullNode();
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return NODES.booleanNode((Boolean) v);
            case TINYINT:
                return NODES.numberNode((Byte) v);
            case SMALLINT:
                return NODES.numberNode((Short) v);
            case INTEGER:
                return NODES.numberNode((Integer) v);
            case BIGINT:
                return NODES.numberNode((Long) v);
            case FLOAT:
                return doubleNode((double) (Float) v);
            case DOUBLE:
                return doubleNode((Double) v);
            case CHAR:
            case VARCHAR:
                return NODES.textNode(v.toString());
            case DECIMAL:
                return NODES.textNode(((Decimal) v).toBigDecimal().toPlainString());
            case BINARY:
            case VARBINARY:
                return NODES.textNode(Base64.getEncoder().encodeToString((byte[]) v));
            case DATE:
                return NODES.textNode(LocalDate.ofEpochDay((Integer) v).toString());
            case TIME_WITHOUT_TIME_ZONE:
                return NODES.textNode(LocalTime.ofNanoOfDay((Integer) v * 1_000_000L).toString());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return NODES.textNode(v.toString());
            case ARRAY:
            case MULTISET:
                {
                    DataType elem =
                            type instanceof ArrayType
                                    ? ((ArrayType) type).getElementType()
                                    : ((MultisetType) type).getElementType();
                    if (type instanceof MultisetType) {
                        // a multiset is stored as a map element -> count
                        return renderMap((InternalMap) v, elem, DataTypes.INT());
                    }
                    InternalArray arr = (InternalArray) v;
                    InternalArray.ElementGetter g = InternalArray.createElementGetter(elem);
                    ArrayNode out = NODES.arrayNode();
                    for (int i = 0; i < arr.size(); i++) {
                        out.add(render(g.getElementOrNull(arr, i), elem));
                    }
                    return out;
                }
            case MAP:
                {
                    MapType mt = (MapType) type;
                    return renderMap((InternalMap) v, mt.getKeyType(), mt.getValueType());
                }
            case ROW:
                {
                    RowType rt = (RowType) type;
                    InternalRow r = (InternalRow) v;
                    ObjectNode out = NODES.objectNode();
                    for (int i = 0; i < rt.getFieldCount(); i++) {
                        DataField f = rt.getFields().get(i);
                        out.set(f.name(), render(InternalRow.createFieldGetter(f.type(), i).getFieldOrNull(r), f.type()));
                    }
                    return out;
                }
            default:
                return NODES.textNode(v.toString());
        }
    }

    private static JsonNode renderMap(InternalMap m, DataType kt, DataType vt) {
        InternalArray keys = m.keyArray();
        InternalArray values = m.valueArray();
        InternalArray.ElementGetter kg = InternalArray.createElementGetter(kt);
        InternalArray.ElementGetter vg = InternalArray.createElementGetter(vt);
        ArrayNode out = NODES.arrayNode();
        for (int i = 0; i < m.size(); i++) {
            ArrayNode pair = out.addArray();
            pair.add(render(kg.getElementOrNull(keys, i), kt));
            pair.add(render(vg.getElementOrNull(values, i), vt));
        }
        return out;
    }

    private static JsonNode doubleNode(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return NODES.textNode(Double.toString(d));
        }
        return NODES.numberNode(d);
    }

    private static Object toInternal(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return v.asBoolean();
            case TINYINT:
                return (byte) v.asInt();
            case SMALLINT:
                return (short) v.asInt();
            case INTEGER:
                return v.asInt();
            case BIGINT:
                return v.asLong();
            case FLOAT:
                return v.isTextual() ? Float.parseFloat(v.asText()) : (float) v.asDouble();
            case DOUBLE:
                return v.isTextual() ? Double.parseDouble(v.asText()) : v.asDouble();
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(v.asText());
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) type;
                    BigDecimal bd = new BigDecimal(v.asText()).setScale(dt.getScale());
                    return Decimal.fromBigDecimal(bd, dt.getPrecision(), dt.getScale());
                }
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(v.asText());
            case DATE:
                return v.isNumber() ? v.asInt() : (int) LocalDate.parse(v.asText()).toEpochDay();
            case TIME_WITHOUT_TIME_ZONE:
                return v.isNumber() ? v.asInt() : (int) (LocalTime.parse(v.asText()).toNanoOfDay() / 1_000_000L);
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return v.isNumber()
                        ? Timestamp.fromEpochMillis(v.asLong())
                        : Timestamp.fromLocalDateTime(LocalDateTime.parse(v.asText().replace(' ', 'T')));
            case ARRAY:
                {
                    DataType elem = ((ArrayType) type).getElementType();
                    Object[] out = new Object[v.size()];
                    for (int i = 0; i < v.size(); i++) {
                        out[i] = toInternal(v.get(i), elem);
                    }
                    return new GenericArray(out);
                }
            case MULTISET:
            case MAP:
                {
                    DataType kt;
                    DataType vt;
                    if (type instanceof MapType) {
                        kt = ((MapType) type).getKeyType();
                        vt = ((MapType) type).getValueType();
                    } else {
                        kt = ((MultisetType) type).getElementType();
                        vt = DataTypes.INT();
                    }
                    Map<Object, Object> m = new LinkedHashMap<>();
                    if (v.isObject()) {
                        Iterator<Map.Entry<String, JsonNode>> it = v.fields();
                        while (it.hasNext()) {
                            Map.Entry<String, JsonNode> e = it.next();
                            m.put(toInternal(NODES.textNode(e.getKey()), kt), toInternal(e.getValue(), vt));
                        }
                    } else {
                        for (JsonNode pair : v) {
                            m.put(toInternal(pair.get(0), kt), toInternal(pair.get(1), vt));
                        }
                    }
                    return new GenericMap(m);
                }
            case ROW:
                {
                    RowType rt = (RowType) type;
                    GenericRow out = new GenericRow(rt.getFieldCount());
                    for (int i = 0; i < rt.getFieldCount(); i++) {
                        DataField f = rt.getFields().get(i);
                        out.setField(i, toInternal(v.isArray() ? v.get(i) : v.get(f.name()), f.type()));
                    }
                    return out;
                }
            default:
                throw new IllegalArgumentException("unsupported type " + type);
        }
    }

    // ------------------------------------------------------------------ type parsing

    /** Parses a Paimon SQL type string; nested types are split here, atoms go to Paimon's parser. */
    static DataType parseType(String s) {
        String text = s.trim();
        boolean notNull = false;
        String upper = text.toUpperCase();
        if (upper.endsWith(" NOT NULL")) {
            notNull = true;
            text = text.substring(0, text.length() - " NOT NULL".length()).trim();
            upper = text.toUpperCase();
        }
        DataType t;
        if (upper.startsWith("ARRAY<")) {
            t = DataTypes.ARRAY(parseType(inner(text)));
        } else if (upper.startsWith("MULTISET<")) {
            t = DataTypes.MULTISET(parseType(inner(text)));
        } else if (upper.startsWith("MAP<")) {
            List<String> parts = splitTop(inner(text));
            t = DataTypes.MAP(parseType(parts.get(0)), parseType(parts.get(1)));
        } else if (upper.startsWith("ROW<")) {
            List<DataField> fields = new ArrayList<>();
            int id = 0;
            for (String part : splitTop(inner(text))) {
                String p = part.trim();
                int sp = p.indexOf(' ');
                String name = p.substring(0, sp).replace("`", "");
                fields.add(new DataField(id++, name, parseType(p.substring(sp + 1))));
            }
            t = new RowType(fields);
        } else {
            return DataTypeJsonParser.parseAtomicTypeSQLString(s.trim());
        }
        return t.copy(!notNull);
    }

    private static String inner(String text) {
        return text.substring(text.indexOf('<') + 1, text.lastIndexOf('>'));
    }

    private static List<String> splitTop(String text) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '<' || c == '(') {
                depth++;
            } else if (c == '>' || c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(text.substring(start, i).trim());
                start = i + 1;
            }
        }
        out.add(text.substring(start).trim());
        return out;
    }

    // ------------------------------------------------------------------ JSON helpers

    private static List<String> stringList(String json) throws Exception {
        List<String> out = new ArrayList<>();
        if (json != null) {
            for (JsonNode n : MAPPER.readTree(json)) {
                out.add(n.asText());
            }
        }
        return out;
    }

    private static Map<String, String> stringMap(String json) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        if (json != null) {
            Iterator<Map.Entry<String, JsonNode>> it = MAPPER.readTree(json).fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getKey(), e.getValue().asText());
            }
        }
        return out;
    }
}
