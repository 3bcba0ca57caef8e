import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.DataField;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;

/**
 * Test-only: the changelog a streaming consumer of Java Paimon 0.9 reads for one snapshot
 * (``scan.mode=from-snapshot``: the follow-up scanner of changelog-producer lookup /
 * full-compaction reads the changelog files of COMPACT snapshots, unmerged, with row kinds),
 * so the changelog our compaction writes can be compared with the one Java's compaction writes.
 * Result: a JSON array of rows, each [row kind, field values...]; strings and numbers as JSON,
 * any other value as its toString().
 */
public final class ChangelogReadHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ChangelogReadHelper() {}

    private static FileStoreTable table(String warehouse, String db, String table) throws Exception {
        Options options = new Options();
        options.set("warehouse", warehouse);
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
        return (FileStoreTable) catalog.getTable(Identifier.create(db, table));
    }

    /**
     * Compacts EVERY bucket that has live files (level 0 included, which a batch scan of DV /
     * first-row tables does not report) in one commit, as a dedicated compaction job does.
     * Returns the latest snapshot id.
     */
    public static long compactAll(String warehouse, String db, String table, boolean full, String tempDir)
            throws Exception {
        Map<String, String> dyn = new HashMap<>();
        dyn.put("write-only", "false");
        FileStoreTable t = table(warehouse, db, table).copy(dyn);
        Set<List<Object>> targets = new LinkedHashSet<>();
        for (ManifestEntry e : t.store().newScan().plan().files()) {
            targets.add(List.of(e.partition(), e.bucket()));
        }
        BatchWriteBuilder builder = t.newBatchWriteBuilder();
        List<CommitMessage> messages;
        try (IOManager io = IOManager.create(tempDir); BatchTableWrite write = builder.newWrite()) {
            write.withIOManager(io);
            for (List<Object> target : targets) {
                write.compact((BinaryRow) target.get(0), (Integer) target.get(1), full);
            }
            messages = write.prepareCommit();
        }
        try (BatchTableCommit commit = builder.newCommit()) {
            commit.commit(messages);
        }
        Long latest = t.snapshotManager().latestSnapshotId();
        return latest == null ? 0 : latest;
    }

    /** Changelog rows a streaming read yields for snapshot ``snapshotId``, in read order. */
    public static String readChangelog(String warehouse, String db, String table, long snapshotId,
                                       String tempDir) throws Exception {
        Map<String, String> dyn = new HashMap<>();
        dyn.put("scan.mode", "from-snapshot");
        dyn.put("scan.snapshot-id", String.valueOf(snapshotId));
        FileStoreTable t = table(warehouse, db, table).copy(dyn);
        List<DataField> fields = t.rowType().getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
        }
        ArrayNode rows = NODES.arrayNode();
        ReadBuilder rb = t.newReadBuilder();
        StreamTableScan scan = rb.newStreamScan();
        List<Split> splits = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            TableScan.Plan plan = scan.plan();
            splits.addAll(plan.splits());
            Long next = scan.checkpoint();
            if (next != null && next > snapshotId) {
                break;
            }
        }
        try (IOManager io = IOManager.create(tempDir);
                RecordReader<InternalRow> reader = rb.newRead().withIOManager(io).createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    ArrayNode out = rows.addArray();
                    out.add(row.getRowKind().shortString());
                    for (InternalRow.FieldGetter g : getters) {
                        Object v = g.getFieldOrNull(row);
                        if (v == null) {
                            out.addNull();
                        } else if (v instanceof Integer) {
                            out.add((Integer) v);
                        } else if (v instanceof Long) {
                            out.add((Long) v);
                        } else if (v instanceof Double) {
                            out.add((Double) v);
                        } else if (v instanceof BinaryString) {
                            out.add(v.toString());
                        } else {
                            out.add(String.valueOf(v));
                        }
                    }
                }
                batch.releaseBatch();
            }
        }
        return MAPPER.writeValueAsString(rows);
    }
}
