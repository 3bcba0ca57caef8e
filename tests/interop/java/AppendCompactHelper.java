/*
 * Test-only bridge for the append-compaction interop tests (tests/interop/test_compact_append_java.py):
 * Java Paimon 0.9's own deletion-vector writer for append tables (what Spark's DELETE does) and
 * its own ZIndexer / HilbertIndexer, so sort-compaction keys can be checked against Paimon itself.
 */

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import org.apache.paimon.deletionvectors.append.AppendDeletionFileMaintainer;
import org.apache.paimon.index.IndexFileHandler;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.manifest.FileKind;
import org.apache.paimon.manifest.IndexManifestEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.sort.hilbert.HilbertIndexer;
import org.apache.paimon.sort.zorder.ZIndexer;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.RowType;

public final class AppendCompactHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Map<String, Catalog> CATALOGS = new HashMap<>();

    private AppendCompactHelper() {}

    private static synchronized FileStoreTable table(String warehouse, String db, String name) throws Exception {
        Catalog catalog = CATALOGS.computeIfAbsent(warehouse, w -> {
            Options options = new Options();
            options.set("warehouse", w);
            return CatalogFactory.createCatalog(CatalogContext.create(options));
        });
        return (FileStoreTable) catalog.getTable(Identifier.create(db, name));
    }

    /**
     * Deletes rows of an append table by position, as Spark's DELETE with deletion vectors does
     * (AppendDeletionFileMaintainer + an index-only commit). deletesJson: {"data file name": [positions]}.
     * Returns the latest snapshot id.
     */
    public static long deleteRows(String warehouse, String db, String name, String deletesJson) throws Exception {
        FileStoreTable t = table(warehouse, db, name);
        JsonNode deletes = MAPPER.readTree(deletesJson);
        Long snapshotId = t.snapshotManager().latestSnapshotId();
        IndexFileHandler handler = t.store().newIndexFileHandler();
        boolean unaware = t.bucketMode() == BucketMode.BUCKET_UNAWARE;
        Map<List<Object>, AppendDeletionFileMaintainer> maintainers = new LinkedHashMap<>();
        for (Split split : t.newReadBuilder().newScan().plan().splits()) {
            DataSplit ds = (DataSplit) split;
            for (DataFileMeta f : ds.dataFiles()) {
                JsonNode positions = deletes.get(f.fileName());
                if (positions == null) {
                    continue;
                }
                List<Object> key = List.of(ds.partition(), ds.bucket());
                AppendDeletionFileMaintainer m = maintainers.get(key);
                if (m == null) {
                    m = unaware
                            ? AppendDeletionFileMaintainer.forUnawareAppend(handler, snapshotId, ds.partition())
                            : AppendDeletionFileMaintainer.forBucketedAppend(
                                    handler, snapshotId, ds.partition(), ds.bucket());
                    maintainers.put(key, m);
                }
                BitmapDeletionVector dv = new BitmapDeletionVector();
                for (JsonNode p : positions) {
                    dv.delete(p.asLong());
                }
                m.notifyNewDeletionVector(f.fileName(), dv);
            }
        }
        List<CommitMessage> messages = new ArrayList<>();
        for (AppendDeletionFileMaintainer m : maintainers.values()) {
            List<IndexFileMeta> added = new ArrayList<>();
            List<IndexFileMeta> deleted = new ArrayList<>();
            for (IndexManifestEntry e : m.persist()) {
                (e.kind() == FileKind.ADD ? added : deleted).add(e.indexFile());
            }
            messages.add(new CommitMessageImpl(m.getPartition(), m.getBucket(), DataIncrement.emptyIncrement(),
                    CompactIncrement.emptyIncrement(), new IndexIncrement(added, deleted)));
        }
        try (BatchTableCommit commit = t.newBatchWriteBuilder().newCommit()) {
            commit.commit(messages);
        }
        return t.snapshotManager().latestSnapshotId();
    }

    /**
     * Paimon's own sort keys of every row the table reads: {"<keyColumn value>": "hex key"}.
     * strategy: "zorder" (ZIndexer with varTypeSize) or "hilbert" (HilbertIndexer).
     */
    public static String sortKeys(String warehouse, String db, String name, String strategy, String columnsJson,
                                  int varTypeSize, String keyColumn) throws Exception {
        FileStoreTable t = table(warehouse, db, name);
        RowType rowType = t.rowType();
        List<String> cols = new ArrayList<>();
        for (JsonNode c : MAPPER.readTree(columnsJson)) {
            cols.add(c.asText());
        }
        ZIndexer z = null;
        HilbertIndexer h = null;
        if ("zorder".equals(strategy)) {
            z = new ZIndexer(rowType, cols, varTypeSize);
            z.open();
        } else {
            h = new HilbertIndexer(rowType, cols);
            h.open();
        }
        int keyIndex = rowType.getFieldNames().indexOf(keyColumn);
        DataField keyField = rowType.getFields().get(keyIndex);
        InternalRow.FieldGetter getter = InternalRow.createFieldGetter(keyField.type(), keyIndex);
        Map<String, String> out = new LinkedHashMap<>();
        ReadBuilder rb = t.newReadBuilder();
        try (RecordReader<InternalRow> reader = rb.newRead().createReader(rb.newScan().plan().splits())) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    byte[] key = z != null ? z.index(row) : h.index(row);
                    StringBuilder sb = new StringBuilder();
                    for (byte b : key) {
                        sb.append(String.format("%02x", b & 0xff));
                    }
                    out.put(String.valueOf(getter.getFieldOrNull(row)), sb.toString());
                }
                batch.releaseBatch();
            }
        }
        return MAPPER.writeValueAsString(out);
    }
}
