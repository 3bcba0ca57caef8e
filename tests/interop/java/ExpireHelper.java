import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;

/**
 * Test-only Java Paimon 0.9 calls for the expire interop tests: read a snapshot or a tag as
 * sorted row strings (so retained snapshots and tags can be compared before and after
 * expiry), and expire with the table's own ExpireConfig (changelog settings included),
 * running changelog expiry after snapshot expiry when the lifecycle is decoupled, as the
 * Java commit does.
 */
public final class ExpireHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ExpireHelper() {}

    private static FileStoreTable open(String warehouse, String db, String table) throws Exception {
        Options options = new Options();
        options.set("warehouse", warehouse);
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
        return (FileStoreTable) catalog.getTable(Identifier.create(db, table));
    }

    /** Sorted "kind|v1|v2..." strings of a batch read at a snapshot id or a tag (JSON array). */
    public static String readRows(String warehouse, String db, String table, Long snapshotId, String tag)
            throws Exception {
        FileStoreTable t = open(warehouse, db, table);
        Map<String, String> dyn = new HashMap<>();
        if (snapshotId != null) {
            dyn.put("scan.snapshot-id", String.valueOf(snapshotId));
        }
        if (tag != null) {
            dyn.put("scan.tag-name", tag);
        }
        t = t.copy(dyn);
        List<DataField> fields = t.rowType().getFields();
        InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
            getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
        }
        List<String> out = new ArrayList<>();
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        try (RecordReader<InternalRow> reader = rb.newRead().createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    StringBuilder sb = new StringBuilder(row.getRowKind().shortString());
                    for (InternalRow.FieldGetter g : getters) {
                        sb.append('|').append(String.valueOf(g.getFieldOrNull(row)));
                    }
                    out.add(sb.toString());
                }
                batch.releaseBatch();
            }
        }
        Collections.sort(out);
        return MAPPER.writeValueAsString(out);
    }

    /** Expire with the table's options plus dynamic ones; returns snapshots + changelogs expired. */
    public static int expireWithOptions(String warehouse, String db, String table, String dynOptionsJson)
            throws Exception {
        FileStoreTable t = open(warehouse, db, table);
        if (dynOptionsJson != null) {
            @SuppressWarnings("unchecked")
            Map<String, String> dyn = MAPPER.readValue(dynOptionsJson, Map.class);
            t = t.copy(dyn);
        }
        CoreOptions o = t.coreOptions();
        int n = t.newExpireSnapshots().config(o.expireConfig()).expire();
        if (o.changelogLifecycleDecoupled()) {
            n += t.newExpireChangelog().config(o.expireConfig()).expire();
        }
        return n;
    }
}
