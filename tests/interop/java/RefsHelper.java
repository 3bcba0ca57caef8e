import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.operation.PartitionExpire;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;

/**
 * Test-only Java Paimon 0.9 calls for tags, branches and partition expiration
 * (tests/interop/test_refs_java.py, test_partition_expire_java.py). Rows travel as JSON
 * arrays of Java toString() values, which is all the simple-typed test tables need.
 */
public final class RefsHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private RefsHelper() {}

    /** A warehouse path or a JSON object of catalog options (see PaimonTestHelper.catalog). */
    private static Catalog catalog(String spec) {
        return PaimonTestHelper.catalog(spec);
    }

    private static FileStoreTable table(String warehouse, String db, String table, String branch)
            throws Exception {
        String name = table;
        if (branch != null && !branch.isEmpty() && !branch.equals("main")) {
            name = table + "$branch_" + branch;
        }
        return (FileStoreTable) catalog(warehouse).getTable(Identifier.create(db, name));
    }

    /** Rows at a tag (scan.tag-name) of a branch (null = main), as sorted JSON string arrays. */
    public static String readTag(String warehouse, String db, String table, String branch, String tag)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table, branch);
        if (tag != null) {
            Map<String, String> dyn = new HashMap<>();
            dyn.put("scan.tag-name", tag);
            t = t.copy(dyn);
        }
        return rows(t);
    }

    /** Rows of the latest snapshot of a branch (null = main), as sorted JSON string arrays. */
    public static String readLatest(String warehouse, String db, String table, String branch)
            throws Exception {
        return rows(table(warehouse, db, table, branch));
    }

    private static String rows(FileStoreTable t) throws Exception {
        List<DataField> fields = t.rowType().getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
        }
        List<List<String>> out = new ArrayList<>();
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        try (RecordReader<InternalRow> reader = rb.newRead().createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    List<String> r = new ArrayList<>(getters.length);
                    for (InternalRow.FieldGetter g : getters) {
                        Object v = g.getFieldOrNull(row);
                        r.add(v == null ? null : v.toString());
                    }
                    out.add(r);
                }
                batch.releaseBatch();
            }
        }
        out.sort((a, b) -> String.valueOf(a).compareTo(String.valueOf(b)));
        return MAPPER.writeValueAsString(out);
    }

    /** table.createTag(name, snapshotId, timeRetained) of Java 0.9. */
    public static void createTagRetained(
            String warehouse, String db, String table, String name, long snapshotId, long retainedMillis)
            throws Exception {
        table(warehouse, db, table, null).createTag(name, snapshotId, Duration.ofMillis(retainedMillis));
    }

    /** Tag of a branch (null = main) via the branch's table object. */
    public static void createBranchTag(
            String warehouse, String db, String table, String branch, String name, long snapshotId)
            throws Exception {
        table(warehouse, db, table, branch).createTag(name, snapshotId);
    }

    public static void deleteBranch(String warehouse, String db, String table, String branch)
            throws Exception {
        table(warehouse, db, table, null).deleteBranch(branch);
    }

    public static void fastForward(String warehouse, String db, String table, String branch)
            throws Exception {
        table(warehouse, db, table, null).fastForward(branch);
    }

    /**
     * Java 0.9's PartitionExpire with check interval 0 (expires on this call) and the given
     * options (partition.expiration-time, partition.timestamp-formatter, ...); returns the
     * expired partition specs as JSON, in Java's order.
     */
    public static String expirePartitions(
            String warehouse, String db, String table, String optionsJson) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, String> opts = MAPPER.readValue(optionsJson, Map.class);
        Map<String, String> dyn = new HashMap<>(opts);
        dyn.put("partition.expiration-check-interval", "0 s");
        FileStoreTable t = table(warehouse, db, table, null).copy(dyn);
        PartitionExpire expire = t.store().newPartitionExpire(UUID.randomUUID().toString());
        if (expire == null) {
            throw new IllegalStateException("no partition expiration configured");
        }
        List<Map<String, String>> expired = expire.expire(Long.MAX_VALUE);
        return MAPPER.writeValueAsString(expired == null ? new ArrayList<>() : expired);
    }
}
