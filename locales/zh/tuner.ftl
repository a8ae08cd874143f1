# Tuner 配置文件卡片（src/ui/tuner_card.rs）：把 tuner 配置文件读成它让
# NCCL 或 HCCL 在每个数据量下执行什么，并与模型的推荐并列。
# 与 ../en/tuner.ftl 的消息 id 一一对应（tests/i18n.rs 检查）。
# 术语依照 HCCL 中文文档与 HCCL Tuner Plugin 示例的 README：规则、命中、
# 数据量、通信域、Server、数据类型。

tn-title = Tuner 配置文件
tn-label = Tuner 配置文件：它让通信库在每个数据量下执行什么
tn-formats = NCCL tuner 配置 · HCCL Tuner Plugin
tn-text = Tuner 配置文件内容
tn-placeholder =
    allreduce,0,65536,tree,simple,-1,1,8
    allreduce,65537,18446744073709551615,ring,ll128,-1,1,8
    {"{"}"version": 1, "op_types": {"{"}…{"}"}{"}"}
tn-paste = 粘贴或拖入一个 tuner 配置文件——NCCL 示例 tuner 插件的配置（NCCL_TUNER_CONFIG_FILE）、其 scripts/optimize_config.py 读取的性能数据 CSV，或 HCCL Tuner Plugin 的 JSON 规则（HCCL_TUNER_CONFIG_FILE）——即可看到：对本页的集合通信原语、rank 数和机器，在图表的每个数据量下该文件让通信库执行什么，并与模型的推荐并列。
tn-no-plan = 页面还没有可供比较的规划。
tn-read = 读取并比较
tn-read-title = 把上面的文本当作 tuner 配置文件读取
tn-load = 加载文件…
tn-load-title = 读取 .conf、.csv 或 .json 文件，显示它让通信库执行什么
tn-unreadable = 无法读取此文件：
tn-not-compared = 此文件无法在此比较：
tn-source-nccl-config = NCCL 示例 tuner 配置
tn-source-nccl-perf = NCCL tuner 性能数据，按其优化脚本写出的配置读取
tn-source-hccl = HCCL Tuner Plugin 规则
tn-rules = { $n } 条规则，首条命中的规则生效
tn-lib-model = 模型
tn-nodes = { $n } 个节点
tn-servers = { $n } 个 Server
tn-nodes-unknown = 节点数未知
tn-for = 此文件让 { $library } 在 { $op }、{ $ranks } 个 rank（{ $at }）、{ $dtype } 下，于图表各数据量执行：
tn-col-size = 数据量
tn-col-file = 此文件 → { $library }
tn-col-model = 模型推荐
tn-no-rule = 无规则命中：由 { $library } 自行选择
tn-line = 第 { $line } 行
tn-channels = { $n } 个通道
tn-same = 与模型推荐相同
tn-differs = 与模型推荐不同
tn-any = 任意
tn-rule-title = 第 { $line } 行：{ $bytes } 字节，rank 数 { $ranks }，节点数 { $nodes }
tn-rule-title-hccl = 第 { $line } 行：{ $bytes } 字节，rank 数 { $ranks }，Server 数 { $nodes }
tn-summary =
    { $case ->
        [one-same] 此文件只在 1 个数据量上起作用（图表共 { $sizes } 个），其选择与模型推荐相同。
        [one-differs] 此文件只在 1 个数据量上起作用（图表共 { $sizes } 个），其选择与模型推荐不同。
        [same] 在此文件起作用的全部 { $matched } 个数据量上（图表共 { $sizes } 个），它的选择都与模型推荐相同。
        [all] 在此文件起作用的全部 { $matched } 个数据量上（图表共 { $sizes } 个），它的选择都与模型推荐不同。
       *[some] 在此文件起作用的 { $matched } 个数据量中（图表共 { $sizes } 个），有 { $differs } 个与模型推荐不同。
    }
tn-apart-hccl = HCCL 的规则指定的是 engine、executor 和 template，模型给出的是通信算法：两者并列显示，不做比较。
tn-apart-library = 此文件由 { $file } 读取，但本页的机器（{ $topo }）运行的是 { $machine }：模型一栏是 { $machine } 在此的选择，仅并列显示，不做比较。
tn-none-match = 此文件没有规则命中 { $op }、{ $ranks } 个 rank（{ $at }）：每个数据量都由 { $library } 自行选择。文件中的规则适用于：
tn-scope = { $op }：rank 数 { $ranks }，节点数 { $nodes }
tn-scope-hccl = { $op }：rank 数 { $ranks }，Server 数 { $nodes }
tn-pending = 正在规划器 Worker 中计算模型推荐…
tn-model-failed = 此处模型无法给出推荐：
tn-notes = 读取文件时的 { $n } 条说明
