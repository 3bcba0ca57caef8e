import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fileindex.FileIndexPredicate;
import org.apache.paimon.fs.Path;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataFilePathFactory;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;

/**
 * File-index checks for the paimon-cli interop tests (Java Paimon 0.9).
 *
 * <p>Predicates travel as JSON: {"op": "eq|ne|lt|le|gt|ge|in|notin|isnull|isnotnull", "col": name,
 * "values": [..]} or {"op": "and|or", "children": [..]}. Literals: numbers for the integer types
 * and DATE (days), strings for CHAR/VARCHAR, numbers for DOUBLE.
 */
public class FileIndexHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private static FileStoreTable table(String warehouse, String db, String name) throws Exception {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options));
        return (FileStoreTable) catalog.getTable(Identifier.create(db, name));
    }

    private static Object literal(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(v.asText());
            case TINYINT:
                return (byte) v.asInt();
            case SMALLINT:
                return (short) v.asInt();
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return v.asInt();
            case BIGINT:
                return v.asLong();
            case FLOAT:
                return (float) v.asDouble();
            case DOUBLE:
                return v.asDouble();
            default:
                throw new IllegalArgumentException("unsupported literal type " + type);
        }
    }

    private static Predicate predicate(JsonNode p, RowType rowType) {
        String op = p.get("op").asText();
        if (op.equals("and") || op.equals("or")) {
            List<Predicate> children = new ArrayList<>();
            for (JsonNode c : p.get("children")) {
                children.add(predicate(c, rowType));
            }
            return op.equals("and") ? PredicateBuilder.and(children) : PredicateBuilder.or(children);
        }
        PredicateBuilder b = new PredicateBuilder(rowType);
        String col = p.get("col").asText();
        int idx = rowType.getFieldIndex(col);
        DataType type = rowType.getTypeAt(idx);
        List<Object> vals = new ArrayList<>();
        if (p.has("values")) {
            for (JsonNode v : p.get("values")) {
                vals.add(literal(v, type));
            }
        }
        switch (op) {
            case "eq":
                return b.equal(idx, vals.get(0));
            case "ne":
                return b.notEqual(idx, vals.get(0));
            case "lt":
                return b.lessThan(idx, vals.get(0));
            case "le":
                return b.lessOrEqual(idx, vals.get(0));
            case "gt":
                return b.greaterThan(idx, vals.get(0));
            case "ge":
                return b.greaterOrEqual(idx, vals.get(0));
            case "in":
                return b.in(idx, vals);
            case "notin":
                return b.notIn(idx, vals);
            case "isnull":
                return b.isNull(idx);
            case "isnotnull":
                return b.isNotNull(idx);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    /**
     * Every live data file's verdict from Java's FileIndexPredicate on its embedded index or its
     * ".index" extra file: {"file name": true (remain) | false (skip)}; files without index: absent.
     */
    public static String testFileIndexes(String warehouse, String db, String name, String predicateJson)
            throws Exception {
        FileStoreTable t = table(warehouse, db, name);
        JsonNode pj = MAPPER.readTree(predicateJson);
        ObjectNode out = NODES.objectNode();
        for (Split s : t.newReadBuilder().newScan().plan().splits()) {
            DataSplit split = (DataSplit) s;
            DataFilePathFactory pf =
                    t.store().pathFactory().createDataFilePathFactory(split.partition(), split.bucket());
            for (DataFileMeta f : split.dataFiles()) {
                RowType fileType = new org.apache.paimon.schema.SchemaManager(t.fileIO(), t.location()).schema(f.schemaId()).logicalRowType();
                // the predicate over the table's columns, mapped to the file's schema by field id (as Java's scan)
                List<Predicate> mapped =
                        org.apache.paimon.schema.SchemaEvolutionUtil.createDataFilters(
                                t.rowType().getFields(),
                                fileType.getFields(),
                                java.util.Collections.singletonList(predicate(pj, t.rowType())));
                Predicate pred = mapped == null || mapped.isEmpty() ? null : PredicateBuilder.and(mapped);
                String indexFile = null;
                for (String extra : f.extraFiles()) {
                    if (extra.endsWith(".index")) {
                        indexFile = extra;
                    }
                }
                if (f.embeddedIndex() != null) {
                    try (FileIndexPredicate fp = new FileIndexPredicate(f.embeddedIndex(), fileType)) {
                        out.put(f.fileName(), fp.testPredicate(pred));
                    }
                } else if (indexFile != null) {
                    Path path = new Path(pf.toPath(f.fileName()).getParent(), indexFile);
                    try (FileIndexPredicate fp = new FileIndexPredicate(path, t.fileIO(), fileType)) {
                        out.put(f.fileName(), fp.testPredicate(pred));
                    }
                }
            }
        }
        return MAPPER.writeValueAsString(out);
    }

    /**
     * Java's filtered batch read (scan + read with the filter, as an engine would push it down),
     * rows re-checked with the predicate: {"files": data files planned, "ids": sorted values of
     * BIGINT column `idColumn` of the matching rows}.
     */
    public static String filteredRead(
            String warehouse, String db, String name, String predicateJson, String idColumn)
            throws Exception {
        FileStoreTable t = table(warehouse, db, name);
        RowType rowType = t.rowType();
        Predicate pred = predicate(MAPPER.readTree(predicateJson), rowType);
        ReadBuilder rb = t.newReadBuilder().withFilter(pred);
        List<Split> splits = rb.newScan().plan().splits();
        int files = 0;
        for (Split s : splits) {
            files += ((DataSplit) s).dataFiles().size();
        }
        int idIdx = rowType.getFieldIndex(idColumn);
        TreeSet<Long> ids = new TreeSet<>();
        List<Long> dup = new ArrayList<>();
        try (RecordReader<InternalRow> reader = rb.newRead().createReader(splits)) {
            RecordReader.RecordIterator<InternalRow> batch;
            while ((batch = reader.readBatch()) != null) {
                InternalRow row;
                while ((row = batch.next()) != null) {
                    if (pred.test(row)) {
                        long id = row.getLong(idIdx);
                        if (!ids.add(id)) {
                            dup.add(id);
                        }
                    }
                }
                batch.releaseBatch();
            }
        }
        ObjectNode out = NODES.objectNode();
        out.put("files", files);
        ArrayNode arr = out.putArray("ids");
        for (Long id : ids) {
            arr.add(id);
        }
        out.put("duplicates", dup.size());
        return MAPPER.writeValueAsString(out);
    }

    /**
     * Benchmark writer: creates nothing, writes `rows` generated rows (id BIGINT = i, s STRING =
     * "user-" + a scrambled id (high cardinality), c INT = i % 10) into the existing append table
     * in ONE batch commit and returns the elapsed milliseconds (generation included; no JSON).
     */
    public static long benchWrite(String warehouse, String db, String name, long rows) throws Exception {
        FileStoreTable t = table(warehouse, db, name);
        long start = System.nanoTime();
        org.apache.paimon.table.sink.BatchWriteBuilder wb = t.newBatchWriteBuilder();
        try (org.apache.paimon.table.sink.BatchTableWrite w = wb.newWrite()) {
            for (long i = 0; i < rows; i++) {
                long scrambled = (i * 0x9E3779B97F4A7C15L) >>> 20;
                w.write(org.apache.paimon.data.GenericRow.of(
                        i, BinaryString.fromString("user-" + scrambled), (int) (i % 10)));
            }
            List<org.apache.paimon.table.sink.CommitMessage> msgs = w.prepareCommit();
            try (org.apache.paimon.table.sink.BatchTableCommit c = wb.newCommit()) {
                c.commit(msgs);
            }
        }
        return (System.nanoTime() - start) / 1_000_000L;
    }
}
